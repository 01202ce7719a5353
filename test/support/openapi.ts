/**
 * GitHub's REST API as its OpenAPI description documents it (@octokit/openapi), for checking the
 * stand-in's answers: an operation's documented statuses, and the schema of one of its answers as a
 * zod schema (zod's JSON Schema reader, OpenAPI 3.0 flavour: `nullable`, formats, enums, required).
 */
import { createRequire } from "node:module";
import { type ZodType, z } from "zod";

interface Response {
  $ref?: string;
  content?: Record<string, { schema: unknown }>;
}
interface Spec {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, Response> };
}

const spec = createRequire(import.meta.url)("@octokit/openapi/generated/api.github.com.json") as Spec;

/**
 * zod reads local references to `#/definitions/NAME` only: the spec's schemas, renamed so. The
 * `email` format is dropped: GitHub itself answers bots' noreply addresses (`ID+app[bot]@users.
 * noreply.github.com`) that a strict email check refuses.
 */
const asDefinitions = (schema: unknown) =>
  JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/definitions/'),
    (_key, value) => {
      if (value?.format !== "email") return value;
      const { format: _, ...rest } = value;
      return rest;
    },
  ) as object;
let definitions: object | undefined;

function operation(path: string, method: string) {
  const op = spec.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`GitHub's OpenAPI description has no ${method} ${path}`);
  return op;
}

/** The statuses GitHub documents for `method path` (path as the spec writes it: `/repos/{owner}/...`). */
export function documentedStatuses(path: string, method: string): number[] {
  return Object.keys(operation(path, method).responses).map(Number);
}

/** The schema of the JSON answer `status` of `method path`; throws when GitHub documents none. */
export function documentedResponse(path: string, method: string, status: number): ZodType {
  let response = operation(path, method).responses[String(status)];
  if (response?.$ref) response = spec.components.responses[response.$ref.split("/").pop() ?? ""];
  const content = response?.content ?? {};
  const schema = (content["application/json"] ?? Object.values(content)[0])?.schema;
  if (!schema) throw new Error(`GitHub documents no JSON answer ${status} for ${method} ${path}`);
  definitions ??= asDefinitions(spec.components.schemas);
  return z.fromJSONSchema({ ...asDefinitions(schema), definitions } as never, {
    defaultTarget: "openapi-3.0",
  });
}

/** Fails with the schema's complaints when `body` is not the documented answer. */
export function expectDocumented(path: string, method: string, status: number, body: unknown): void {
  const result = documentedResponse(path, method, status).safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 10).map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`${method} ${path} ${status} is not as GitHub documents it:\n${problems.join("\n")}`);
  }
}
