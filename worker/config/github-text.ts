/**
 * Schema of the `github:` section of config/default.yaml: what the app's text on GitHub may hold.
 * The model's summary, thoughts and tool output become pull request bodies, comments and commit
 * messages; a link or image in them stays live only when it points at the GitHub host itself (or
 * GHE_HOST) or at a host listed here (src/shared/github/inert-links.ts). Everything else is shown as inert
 * code text, so GitHub's image proxy fetches nothing and a reader clicks nothing on another host.
 */
import { z } from "zod";

/** `docs.example.com` or `registry.example.com:8443`: a host name, an optional port, nothing else. */
const host = z
  .string()
  .regex(
    /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?$/,
    "a host name in lower case, optionally with :port (no scheme, path or wildcard), e.g. docs.example.com",
  );

export const githubTextConfigSchema = z
  .strictObject({
    linkHosts: z
      .array(host)
      .default([])
      .describe(
        "Hosts beside the GitHub host (github.com or GHE_HOST) that links and images of the model's text may point at; others are shown as inert code text. Host names only, e.g. docs.example.com.",
      ),
  })
  .describe(
    "What the app's text on GitHub may hold (pull request bodies, comments, review replies, commit messages).",
  );
export type GithubTextConfig = z.infer<typeof githubTextConfigSchema>;
