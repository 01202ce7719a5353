/**
 * Pull request reviews on the stand-in: reading a review and its line comments, as the worker does
 * for a review run. Reviews are added by the test, through
 * `reviewEvent` (test/support/webhooks.ts), as a reviewer would submit them on GitHub.
 */
import { userJson } from "./render.js";
import type { Route, RouteContext, RouteResult } from "./routes.js";
import type { StandInRepo, StandInReview, StandInReviewComment } from "./state.js";

interface Helpers {
  withRepo(
    handler: (ctx: RouteContext, repo: StandInRepo) => Promise<RouteResult> | RouteResult,
  ): Route["handler"];
  notFound(what?: string): RouteResult;
  invalid(message: string): RouteResult;
}

const R = "/repos/([^/]+)/([^/]+)";

function reviewJson(base: string, review: StandInReview) {
  return {
    id: review.id,
    node_id: `PRR_${review.id}`,
    user: userJson(review.user),
    body: review.body,
    state: review.state,
    html_url: `${base}/${review.owner}/${review.repo}/pull/${review.pullNumber}#pullrequestreview-${review.id}`,
  };
}

function reviewCommentJson(base: string, review: StandInReview, comment: StandInReviewComment) {
  return {
    id: comment.id,
    pull_request_review_id: review.id,
    path: comment.path,
    line: comment.line,
    original_line: comment.line,
    body: comment.body,
    user: userJson(review.user),
    html_url: `${base}/${review.owner}/${review.repo}/pull/${review.pullNumber}#discussion_r${comment.id}`,
  };
}

/** Create a reply for a review comment: 201 with the new comment in the same thread, 404 for an unknown one. */
function replyRoute({ withRepo, notFound, invalid }: Helpers): Route {
  return {
    method: "POST",
    pattern: new RegExp(`^${R}/pulls/(\\d+)/comments/(\\d+)/replies$`),
    auth: "installation",
    handler: withRepo((ctx, repo) => {
      const pullNumber = Number(ctx.params[2]);
      const commentId = Number(ctx.params[3]);
      const review = ctx.state.reviews.find(
        (r) =>
          r.owner === repo.owner &&
          r.repo === repo.name &&
          r.pullNumber === pullNumber &&
          r.comments.some((c) => c.id === commentId),
      );
      const comment = review?.comments.find((c) => c.id === commentId);
      if (!review || !comment) return notFound();
      if (typeof ctx.body.body !== "string" || ctx.body.body === "") return invalid("body is missing");
      const reply = { id: ctx.state.id(), body: ctx.body.body, user: ctx.bot };
      comment.replies = [...(comment.replies ?? []), reply];
      return {
        status: 201,
        body: {
          id: reply.id,
          in_reply_to_id: comment.id,
          path: comment.path,
          line: comment.line,
          body: reply.body,
          user: userJson(reply.user),
          html_url: `${ctx.base}/${repo.owner}/${repo.name}/pull/${pullNumber}#discussion_r${reply.id}`,
        },
      };
    }),
  };
}

export function reviewRoutes(helpers: Helpers): Route[] {
  const { withRepo, notFound } = helpers;
  const reviewOf = (ctx: RouteContext, repo: StandInRepo) => {
    const review = ctx.state.review(repo.owner, repo.name, Number(ctx.params[3]));
    return review && review.pullNumber === Number(ctx.params[2]) ? review : undefined;
  };
  return [
    replyRoute(helpers),
    {
      method: "GET",
      pattern: new RegExp(`^${R}/pulls/(\\d+)/reviews/(\\d+)$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const review = reviewOf(ctx, repo);
        return review ? { status: 200, body: reviewJson(ctx.base, review) } : notFound();
      }),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${R}/pulls/(\\d+)/reviews/(\\d+)/comments$`),
      auth: "installation",
      handler: withRepo((ctx, repo) => {
        const review = reviewOf(ctx, repo);
        if (!review) return notFound();
        const perPage = Number(ctx.query.get("per_page") ?? 30);
        const page = Number(ctx.query.get("page") ?? 1);
        return {
          status: 200,
          body: review.comments
            .slice((page - 1) * perPage, page * perPage)
            .map((c) => reviewCommentJson(ctx.base, review, c)),
        };
      }),
    },
  ];
}
