// Chromium flags of every launch (build.mjs's check and driver.mjs's pages); see docs/interop.md.
// --no-sandbox: the tests run as root in a container, where Chromium's sandbox cannot start.
// The others keep a test browser off the network (no QUIC, no component updates, no sync, no
// background requests) and skip first-run UI. Each page also gets its own new --user-data-dir.
export const baseFlags = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
