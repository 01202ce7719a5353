/**
 * Version of the sandbox image (sandbox/image/Dockerfile). sandbox/image/build.sh reads it from this line,
 * so bump it whenever the Dockerfile changes: a worker records the tag it ran in every trajectory.
 */
/** @public (read by sandbox/image/build.sh, not imported) */
export const SANDBOX_IMAGE_VERSION = "0.2.0";
export const SANDBOX_IMAGE_NAME = "agent-fix-sandbox";
export const SANDBOX_IMAGE = `${SANDBOX_IMAGE_NAME}:${SANDBOX_IMAGE_VERSION}`;
/** The rich image (sandbox/image/rich.Dockerfile): bump when that file changes. @public (read by build.sh --rich) */
export const SANDBOX_RICH_IMAGE_VERSION = "0.1.4";
export const SANDBOX_RICH_IMAGE_NAME = "agent-fix-sandbox-rich";
export const SANDBOX_RICH_IMAGE = `${SANDBOX_RICH_IMAGE_NAME}:${SANDBOX_RICH_IMAGE_VERSION}`;
