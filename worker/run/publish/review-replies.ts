/**
 * Replies in the review threads a review run answers: one per line comment of the reviews it
 * addressed, beside the summary on the pull request, so each reviewer sees the answer where they asked.
 * GitHub: POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies.
 */
import type { Feedback } from "../../../src/shared/queue/index.js";

interface Response<T> {
  data: T;
}
type PullParams = { owner: string; repo: string; pull_number: number };

/** The part of GitHub's API the thread replies use. */
interface ThreadReplyApi {
  rest: {
    pulls: {
      listCommentsForReview(
        params: PullParams & { review_id: number; per_page?: number },
      ): Promise<Response<Array<{ id: number }>>>;
      createReplyForReviewComment(
        params: PullParams & { comment_id: number; body: string },
      ): Promise<unknown>;
    };
  };
}

const MAX_THREAD_REPLIES = 100;

export function threadReplyBody(branch: string): string {
  return `Addressed in the new commit on \`${branch}\`; the repository's tests pass on it. The summary of the run is on this pull request.`;
}

/** Replies to every line comment of the addressed reviews; returns how many replies were posted. */
export async function replyInReviewThreads(
  api: ThreadReplyApi,
  pull: PullParams,
  feedback: readonly Feedback[],
  branch: string,
): Promise<number> {
  const reviewIds = feedback.flatMap((f) => (f.reviewId === undefined ? [] : [f.reviewId]));
  const lists = await Promise.all(
    reviewIds.map((review_id) =>
      api.rest.pulls
        .listCommentsForReview({ ...pull, review_id, per_page: MAX_THREAD_REPLIES })
        .then((r) => r.data)
        // A review deleted since it was queued has no threads left to answer.
        .catch((error: { status?: number }) => {
          if (error.status === 404) return [];
          throw error;
        }),
    ),
  );
  const body = threadReplyBody(branch);
  let posted = 0;
  for (const comment of lists.flat().slice(0, MAX_THREAD_REPLIES)) {
    // One at a time: GitHub's secondary rate limits punish bursts of writes.
    await api.rest.pulls.createReplyForReviewComment({ ...pull, comment_id: comment.id, body });
    posted++;
  }
  return posted;
}
