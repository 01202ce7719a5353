/**
 * Variants: `NAME=OVERRIDES.yaml`, a YAML file in the shape of config/default.yaml laid over it (tool
 * bundle, history processor, syntax gate, window size...). The configuration with no overrides always
 * runs as `default`, the row the others compare with.
 */
import { resolve } from "node:path";
import { ConfigError } from "../../src/shared/errors.js";
import { type AgentFixConfig, loadConfig } from "../agent/config-file.js";

export interface Variant {
  name: string;
  config: AgentFixConfig;
}

interface VariantSpec {
  name: string;
  /** The overrides file; none for `default`. */
  file: string | null;
}

function parseVariantSpec(spec: string): VariantSpec {
  const match = /^([A-Za-z0-9_.-]+)=(.+)$/.exec(spec);
  if (!match || match[1] === "default") {
    throw new ConfigError(
      `--variant ${spec}: expected NAME=OVERRIDES.yaml with a NAME other than "default"`,
      {
        code: "eval_variant_invalid",
        hint: "e.g. --variant no-lint=no-lint.yaml, the file holding `aci: { lint: false }`.",
      },
    );
  }
  return { name: match[1]!, file: resolve(match[2]!) };
}

/** `base`: the user's config file (`--config`), under every variant's overrides. */
export async function loadVariants(specs: readonly string[], base?: string): Promise<Variant[]> {
  const all: VariantSpec[] = [{ name: "default", file: null }, ...specs.map(parseVariantSpec)];
  const names = new Set<string>();
  const variants: Variant[] = [];
  for (const spec of all) {
    if (names.has(spec.name)) {
      throw new ConfigError(`--variant ${spec.name} is given twice`, { code: "eval_variant_invalid" });
    }
    names.add(spec.name);
    const files = [...(base ? [resolve(base)] : []), ...(spec.file ? [spec.file] : [])];
    variants.push({ name: spec.name, config: await loadConfig({ files }) });
  }
  return variants;
}
