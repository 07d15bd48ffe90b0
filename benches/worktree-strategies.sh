#!/bin/bash
# Per-task cost of the ways to give a task a worktree of its own, with git's command line and
# the kernel (no runner involved): set-up / tear-down in ms, median of RUNS, with the 1-minute
# load average. The overlay row needs root (mount rights).
#
#   benches/worktree-strategies.sh REPO OUT_DIR [RUNS]
#
# REPO is a clone with a checkout (it gets worktrees added and removed); OUT_DIR is where the
# worktrees go (its file system is what is measured: e.g. a journaled ext4 or /dev/shm).
# `STRACE=1` prints `strace -c -f` for one set-up of each instead of timing.
set -u
REPO=$1
OUT=$2
RUNS=${3:-5}
mkdir -p "$OUT"
HEAD=$(git -C "$REPO" rev-parse HEAD)
GD=$(git -C "$REPO" rev-parse --absolute-git-dir)
W=$OUT/wt
P=$OUT/pristine
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # label set-up tear-down
  local label=$1 setup=$2 teardown=$3 s=() t=()
  if [ "${STRACE:-0}" = 1 ]; then
    echo "== $label"
    strace -f -c -o /tmp/strace.$$ bash -c "$setup" >/dev/null 2>&1
    head -12 /tmp/strace.$$ | tail -10
    bash -c "$teardown" >/dev/null 2>&1
    return
  fi
  for _ in $(seq 1 "$RUNS"); do
    sync
    local t0
    t0=$(date +%s%N)
    bash -c "$setup" >/dev/null 2>&1 || echo "set-up failed: $label" >&2
    s+=("$(ms "$t0")")
    t0=$(date +%s%N)
    bash -c "$teardown" >/dev/null 2>&1 || echo "tear-down failed: $label" >&2
    t+=("$(ms "$t0")")
  done
  printf "| %-58s | %6s / %6s | %s |\n" "$label" "$(printf '%s\n' "${s[@]}" | med)" \
    "$(printf '%s\n' "${t[@]}" | med)" "$(cut -d' ' -f1 /proc/loadavg)"
}
echo "| $(git -C "$REPO" ls-files | wc -l) files, worktrees in $OUT | set-up / tear-down (ms) | load |"
echo "|---|---|---|"
run "git worktree add --detach / remove --force" \
  "git -C $REPO worktree add -q --detach $W $HEAD" "git -C $REPO worktree remove --force $W"
run "the same, checkout.workers=2" \
  "git -C $REPO -c checkout.workers=2 -c checkout.thresholdForParallelism=1 worktree add -q --detach $W $HEAD" \
  "git -C $REPO worktree remove --force $W"
rm -rf "$P"
git -C "$REPO" worktree add -q --detach "$P" "$HEAD"
run "cp -a --reflink=auto of a pristine checkout / rm -rf" "cp -a --reflink=auto $P $W" "rm -rf $W"
run "hardlink farm cp -al (not isolation) / rm -rf" "cp -al $P $W" "rm -rf $W"
run "worktree add --no-checkout + sparse (README only) / remove" \
  "git -C $REPO worktree add -q --no-checkout --detach $W $HEAD && git -C $W sparse-checkout set --no-cone /README.md && git -C $W checkout -q" \
  "git -C $REPO worktree remove --force $W"
run "reuse: reset --hard + clean -ffdx after one edit" \
  "echo x >> $P/README.md; git -C $P reset -q --hard && git -C $P clean -q -ffdx" "true"
run "overlay on the pristine checkout + own git dir + index copy / umount + rm" \
  "mkdir -p $OUT/ov/u $OUT/ov/w $OUT/ov/m $OUT/ov/g && mount -t overlay overlay -o lowerdir=$P,upperdir=$OUT/ov/u,workdir=$OUT/ov/w,redirect_dir=on,index=off,metacopy=off,volatile $OUT/ov/m && echo $HEAD > $OUT/ov/g/HEAD && echo $GD > $OUT/ov/g/commondir && echo $OUT/ov/m/.git > $OUT/ov/g/gitdir && cp $GD/worktrees/pristine/index $OUT/ov/g/index && echo gitdir: $OUT/ov/g > $OUT/ov/m/.git" \
  "umount $OUT/ov/m && rm -rf $OUT/ov"
run "git status in a fresh overlay worktree (copied index)" \
  "mkdir -p $OUT/ov/u $OUT/ov/w $OUT/ov/m $OUT/ov/g && mount -t overlay overlay -o lowerdir=$P,upperdir=$OUT/ov/u,workdir=$OUT/ov/w,redirect_dir=on,index=off,metacopy=off,volatile $OUT/ov/m && echo $HEAD > $OUT/ov/g/HEAD && echo $GD > $OUT/ov/g/commondir && echo $OUT/ov/m/.git > $OUT/ov/g/gitdir && cp $GD/worktrees/pristine/index $OUT/ov/g/index && echo gitdir: $OUT/ov/g > $OUT/ov/m/.git && test -z \"\$(git -C $OUT/ov/m status --porcelain)\"" \
  "umount $OUT/ov/m && rm -rf $OUT/ov"
git -C "$REPO" worktree remove --force "$P"
