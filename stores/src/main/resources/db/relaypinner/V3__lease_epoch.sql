-- Fencing tokens (issue 36): each lease has an epoch, taken from one sequence for every name, so
-- an epoch never goes back, even across a release (a DELETE) and a later insert of the same
-- name. A renewal keeps the epoch; a takeover, or a retake after expiry, gets a new one. A
-- fenced write checks (name, holder, epoch) in its transaction, FOR SHARE: a stale holder's
-- write is refused, and a takeover waits until a fenced write under way has committed.
CREATE SEQUENCE relay_lease_epoch;
ALTER TABLE relay_leases ADD COLUMN epoch BIGINT NOT NULL DEFAULT nextval('relay_lease_epoch');
