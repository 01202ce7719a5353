/** The Probot app: one line per event; the handlers in handlers/ only filter and enqueue. */
import type { ApplicationFunction } from "probot";
import { appLoginReader } from "../shared/github/own-pull.js";
import { onPush } from "./handlers/base-pushed.js";
import { onCiCompleted } from "./handlers/ci-failed.js";
import { oncePerSignedBody } from "./handlers/deliveries.js";
import type { HandlerDeps } from "./handlers/deps.js";
import { onInstallation } from "./handlers/installation.js";
import { onIssueCommentCreated } from "./handlers/issue-comment-created.js";
import { onIssueClosed } from "./handlers/issues-closed.js";
import { onIssueLabeled } from "./handlers/issues-labeled.js";
import { onIssueUnlabeled } from "./handlers/issues-unlabeled.js";
import { onMarketplacePurchase } from "./handlers/marketplace.js";
import { onPullRequestReviewSubmitted } from "./handlers/pull-request-review.js";

export function agentFixApp(base: Omit<HandlerDeps, "appLogin">): ApplicationFunction {
  return (app) => {
    const deps: HandlerDeps = { ...base, appLogin: appLoginReader(() => app.auth()) };
    // A body already handled is answered and ignored under any X-GitHub-Delivery: it never starts a run twice.
    const once = oncePerSignedBody;
    app.on(
      "issues.labeled",
      once(deps, (context) => onIssueLabeled(context, deps)),
    );
    app.on(
      "issues.unlabeled",
      once(deps, (context) => onIssueUnlabeled(context, deps)),
    );
    app.on(
      "issues.closed",
      once(deps, (context) => onIssueClosed(context, deps)),
    );
    app.on(
      "issue_comment.created",
      once(deps, (context) => onIssueCommentCreated(context, deps)),
    );
    app.on(
      "pull_request_review.submitted",
      once(deps, (context) => onPullRequestReviewSubmitted(context, deps)),
    );
    app.on(
      ["check_suite.completed", "check_run.completed", "status", "workflow_run.completed"],
      once(deps, (context) => onCiCompleted(context, deps)),
    );
    app.on(
      "push",
      once(deps, (context) => onPush(context, deps)),
    );
    app.on(["installation", "installation_repositories"], (context) => onInstallation(context, deps));
    app.on("marketplace_purchase", (context) => onMarketplacePurchase(context, deps));
  };
}
