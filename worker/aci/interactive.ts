/**
 * Commands that would wait for a person: editors, pagers on a terminal, REPLs started without a
 * program. They are recognised before running and answered with what to do instead, because in the
 * sandbox (no terminal, stdin closed) they would hang until the timeout or exit without saying why.
 */

const editors = new Set([
  "vi",
  "vim",
  "nvim",
  "view",
  "vimdiff",
  "nano",
  "pico",
  "emacs",
  "micro",
  "joe",
  "mcedit",
  "ne",
]);
const pagers = new Set(["less", "more", "most", "top", "htop", "watch"]);
/** REPLs: interactive when started without a script, `-c`/`-e` code or piped input. */
const repls = new Set([
  "python",
  "python2",
  "python3",
  "ipython",
  "node",
  "nodejs",
  "irb",
  "pry",
  "php",
  "lua",
  "R",
  "ghci",
  "julia",
  "scala",
  "psql",
  "mysql",
  "sqlite3",
  "gdb",
  "pdb",
  "bash",
  "sh",
  "zsh",
  "fish",
]);
const prefixes = new Set(["sudo", "time", "nice", "nohup", "exec", "command", "env"]);

function words(segment: string): string[] {
  return segment.trim().split(/\s+/).filter(Boolean);
}

function programOf(tokens: string[]): { program: string; rest: string[] } | null {
  let index = 0;
  while (index < tokens.length) {
    const token = tokens[index]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(token) || prefixes.has(token)) {
      index++;
      continue;
    }
    const program = token.replace(/^.*\//, "").replace(/^["']|["']$/g, "");
    return { program, rest: tokens.slice(index + 1) };
  }
  return null;
}

/** Flags after which a REPL still runs interactively. */
function onlyInteractiveFlags(rest: string[]): boolean {
  return rest.every(
    (token) => token === "-i" || token === "-q" || token === "--interactive" || token === "-u",
  );
}

/**
 * An explanation when the command would start an interactive program; null when it may run.
 * `editTools` names the bundle's own editing tools ("the edit command" in the `aci` bundle).
 */
export function interactiveCommandProblem(command: string, editTools = "the edit command"): string | null {
  if (/<<|<\s*\S/.test(command)) return null; // input is supplied by a heredoc or a redirect
  for (const segment of command.split(/&&|\|\||;|\n|&(?!>)/)) {
    const pipeline = segment.split("|");
    for (const [position, part] of pipeline.entries()) {
      const found = programOf(words(part));
      if (!found) continue;
      const { program, rest } = found;
      if (editors.has(program)) {
        return `${program} is an interactive editor and cannot be used here (there is no terminal). Use ${editTools} to change files, or a non-interactive command such as sed -i.`;
      }
      if (pagers.has(program) && position === 0) {
        return `${program} is an interactive program and cannot be used here (there is no terminal). Use cat, head, tail, grep or sed -n 'START,ENDp' FILE to read files, and ps to list processes.`;
      }
      if (repls.has(program) && position === 0 && (rest.length === 0 || onlyInteractiveFlags(rest))) {
        return `${program} without a script or code starts an interactive session, which cannot be used here (stdin is closed). Write the code to a file and run it (e.g. ${program} script_file), or pass it inline (e.g. python3 -c '...', node -e '...').`;
      }
    }
  }
  return null;
}
