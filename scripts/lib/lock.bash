# shellcheck shell=bash
# Sourced by the install scripts: `cache_lock DIR NAME` holds an exclusive lock on DIR/.NAME.lock
# until the script ends, so two installs into one cache at once (a person's and a test's, two
# clones) take turns instead of building over each other; the second then finds the first's
# work done. Each script locks a file of its own (one that calls another must not wait on
# itself). Without flock(1) (util-linux), installs are not serialised: said once.
cache_lock() {
  mkdir -p "$1"
  if ! command -v flock >/dev/null 2>&1; then
    echo "$2: flock is not installed: another install into $1 at the same time could clash" >&2
    return 0
  fi
  local fd
  exec {fd}>"$1/.$2.lock"
  if ! flock -n "$fd"; then
    echo "$2: another install into $1 is under way: waiting for it" >&2
    flock "$fd"
  fi
}
