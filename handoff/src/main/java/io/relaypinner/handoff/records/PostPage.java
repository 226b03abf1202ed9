package io.relaypinner.handoff.records;

import java.util.List;

/** One page of {@code posts.json}: the posts and Aleph's pagination numbers. */
public record PostPage(List<PostRecord> posts, int page, int perPage, long total) {
  public PostPage {
    posts = List.copyOf(posts);
  }
}
