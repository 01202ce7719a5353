export {
  type GitHubApi,
  githubFailure,
} from "./api.js";

export { fitComment, githubLength } from "./limits.js";
export { hasWriteAccess } from "./permissions.js";
export { renderPullRequestBody } from "./pr-body.js";
export {
  githubMessage,
  NOT_A_DRAFT_NOTE,
  openOrUpdatePullRequest,
  requestReview,
  reviewRefusal,
} from "./pull-request.js";
export {
  createStatusComment,
  STATUS_MARKER,
  type StatusView,
  updateStatusComment,
} from "./status.js";
export { renderTrajectorySummary } from "./summary.js";
