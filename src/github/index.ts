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
