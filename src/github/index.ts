export {
  type CommentData,
  type GitHubApi,
  githubFailure,
  httpStatus,
  type PullData,
  type RepoRef,
} from "./api.js";
export { type LeftWork, type LeftWorkTests, renderLeftWork, testTail } from "./left-work.js";
export { cutAt, fitComment, GITHUB_BODY_LIMIT, githubLength } from "./limits.js";
export { hasWriteAccess } from "./permissions.js";
export { type PullRequestBodyInput, renderPullRequestBody, type TestProofView } from "./pr-body.js";
export {
  fixBranchName,
  githubMessage,
  NOT_A_DRAFT_NOTE,
  openOrUpdatePullRequest,
  type PullRequestInput,
  type PullRequestResult,
  requestReview,
  reviewRefusal,
} from "./pull-request.js";
export {
  createStatusComment,
  type IssueRef,
  renderStatus,
  STATUS_MARKER,
  type StatusContext,
  type StatusPhase,
  type StatusView,
  statusPhases,
  updateStatusComment,
} from "./status.js";
export { renderTrajectorySummary, SUMMARY_MARKER, type SummaryOptions } from "./summary.js";
