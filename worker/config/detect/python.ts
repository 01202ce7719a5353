import type { EcosystemRule, PartFiles } from "./types.js";

const PIP = ".venv/bin/python -m pip install";
/** Extras that conventionally hold the test dependencies, in order of preference. */
const TEST_EXTRAS = ["test", "tests", "testing", "dev"];

const isRequirements = (name: string) => /^requirements[^/]*\.txt$/.test(name);

/** The keys of a TOML/INI section such as `[project.optional-dependencies]`, read line by line. */
function sectionKeys(text: string | undefined, header: string): string[] {
  if (text === undefined) return [];
  const keys: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) {
      inside = trimmed === `[${header}]`;
      continue;
    }
    const key = inside && !/^\s/.test(line) ? /^([A-Za-z0-9_.-]+)\s*[=:]/.exec(trimmed)?.[1] : undefined;
    if (key) keys.push(key);
  }
  return keys;
}

/** Whether the directory is a package pip can install (pyproject with a build or project table, setup.py/cfg). */
function installable(part: PartFiles): boolean {
  const pyproject = part.text("pyproject.toml") ?? "";
  return (
    part.names.has("setup.py") ||
    /^\[(project|build-system|tool\.poetry)\]/m.test(pyproject) ||
    /^\[metadata\]/m.test(part.text("setup.cfg") ?? "")
  );
}

function usesPytest(part: PartFiles, readNames: string[]): boolean {
  if (part.names.has("pytest.ini")) return true;
  if ([...part.names].some((name) => name === "conftest.py" || name.endsWith("/conftest.py"))) return true;
  return readNames.some((name) => /\bpytest\b/.test(part.text(name) ?? ""));
}

/** unittest's discovery only enters packages: a tests directory without __init__.py is named. */
function unittestCommand(names: ReadonlySet<string>): string {
  for (const dir of ["tests", "test"]) {
    const has = [...names].some((name) => name.startsWith(`${dir}/`));
    if (has && !names.has(`${dir}/__init__.py`)) return `.venv/bin/python -m unittest discover -s ${dir}`;
  }
  return ".venv/bin/python -m unittest discover";
}

const MANIFESTS = ["pyproject.toml", "setup.cfg", "setup.py", "tox.ini"];

export const pythonRule: EcosystemRule = {
  ecosystem: "python",
  marks: (names) => MANIFESTS.some((name) => names.has(name)) || [...names].some(isRequirements),
  reads: (names) => [
    ...["pyproject.toml", "setup.cfg", "tox.ini"].filter((name) => names.has(name)),
    ...[...names].filter(isRequirements).sort(),
  ],
  detect(part) {
    const requirements = [...part.names].filter(isRequirements).sort();
    const read = [...["pyproject.toml", "setup.cfg", "tox.ini"], ...requirements];
    const pytest = usesPytest(part, read);
    // The system's packages stay visible (pip installs over them in the venv): pytest from the image's
    // Debian packages needs no PyPI, so a project testing with nothing else sets up and runs offline.
    const setup = ["python3 -m venv --system-site-packages .venv"];
    if (requirements.length) setup.push(`${PIP} ${requirements.map((name) => `-r ${name}`).join(" ")}`);
    const extras = [
      ...sectionKeys(part.text("pyproject.toml"), "project.optional-dependencies"),
      ...sectionKeys(part.text("setup.cfg"), "options.extras_require"),
    ];
    const extra = TEST_EXTRAS.find((name) => extras.includes(name));
    if (installable(part)) setup.push(`${PIP} -e ${extra ? `".[${extra}]"` : "."}`);
    // Already installed (a pinned one included) it is left as it is; otherwise the runner is added.
    if (pytest) setup.push(`${PIP} pytest`);
    const evidence = [
      ...MANIFESTS.filter((name) => part.names.has(name)),
      ...requirements,
      ...(extra ? [`extra [${extra}]`] : []),
      pytest ? "pytest" : "unittest",
    ];
    return {
      evidence,
      setup,
      test: pytest ? ".venv/bin/python -m pytest" : unittestCommand(part.names),
    };
  },
};
