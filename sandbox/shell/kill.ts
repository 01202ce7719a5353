/**
 * Bash function for the control session, using builtins only (no fork: a fork bomb may have used up
 * the process limit). `__af_kill ROOT SELF ORPHANS SID [PROTECTED...]` kills the descendants of ROOT
 * (and ROOT itself when SELF=1), plus, when ORPHANS=1, every process reparented to pid 1 (in a container
 * all of those were started by the agent), plus, when SID>0, every process of session SID. Each round
 * stops, then kills what it found, until three scans in a row find nothing. Prints `remaining N`.
 * With `__af_freeze=1` (the Docker driver's root control shell, which may signal every process of the
 * container) each round first stops every process but init and itself with one `kill -STOP -1`: a fork
 * bomb then no longer competes for the CPU while it is scanned, and cannot fork while it is killed.
 * Whatever was not killed is continued at the end. Never set it where -1 means more than one sandbox.
 */
export const KILL_FUNCTION = `__af_kill() {
  local root=$1 self=$2 orphans=$3 sid=$4
  shift 4
  local -A keep=([1]=1 [$$]=1)
  local x n f line pid rest round empty=0 zombies=0 rootalive
  for x in "$@"; do keep[$x]=1; done
  local -a st todo found
  local -A kids seen
  for ((round = 0; round < 200; round++)); do
    ((__af_freeze)) && kill -STOP -1 2>/dev/null
    kids=(); seen=(); found=(); todo=("$root"); zombies=0; rootalive=0
    for f in /proc/[0-9]*/stat; do
      { read -r line < "$f"; } 2>/dev/null || continue
      pid=\${line%% *}
      rest=\${line##*) }
      st=($rest)
      case \${st[0]} in
        Z|X|x) ((orphans && st[1] == 1)) && ((zombies++)); continue ;;
      esac
      kids[\${st[1]}]+=" $pid"
      [[ $pid == "$root" ]] && rootalive=1
      if (( (orphans && st[1] == 1) || (sid > 0 && st[3] == sid) )); then todo+=("$pid"); fi
    done
    while ((\${#todo[@]})); do
      x=\${todo[-1]}
      unset 'todo[-1]'
      [[ -n \${seen[$x]} ]] && continue
      seen[$x]=1
      if [[ $x == "$root" ]]; then
        ((self && rootalive)) && found+=("$x")
      elif [[ -n \${keep[$x]} ]]; then
        continue
      else
        found+=("$x")
      fi
      for n in \${kids[$x]}; do todo+=("$n"); done
    done
    if ((\${#found[@]} == 0)); then
      # Done after three empty scans in a row (a process forked while a round ran may show up late)
      # once init has reaped the killed orphans, whose pids count against the limit until then.
      if ((zombies == 0)); then
        ((++empty >= 3)) && { ((__af_freeze)) && kill -CONT -1 2>/dev/null; echo "remaining 0"; return 0; }
      else
        empty=0
      fi
      [[ -n $__af_sleepfd ]] && read -r -t 0.02 -u "$__af_sleepfd" x 2>/dev/null
      continue
    fi
    empty=0
    kill -STOP "\${found[@]}" 2>/dev/null
    kill -KILL "\${found[@]}" 2>/dev/null
  done
  ((__af_freeze)) && kill -CONT -1 2>/dev/null
  echo "remaining \${#found[@]} zombies $zombies"
}
# A descriptor that never has data: \`read -t\` on it sleeps without a fork.
exec {__af_sleepfd}<> <(:)`;
