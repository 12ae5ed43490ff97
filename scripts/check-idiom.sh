#!/usr/bin/env bash
# check-idiom.sh — one cleanup idiom (issue 15 item 5; zstd's FORWARD_IF_ERROR): a function
# forwards a failed step to its one `out:` label with VF_TRY / VF_FAIL (include/vforge/util.h)
# and releases what it holds there, once.  Two things are the other idiom and are flagged:
#
#   a chain test   `st == VF_OK` before the function's `out:` label (or anywhere in a function
#                  that has none): `if (st == VF_OK) st = step();`, `for (...; st == VF_OK && ...)`.
#                  Before `out:` st is VF_OK by construction; after it, a test of st (commit on
#                  success, remove a temporary on failure) is cleanup and is not flagged.
#   another label  `goto fail` / `done` / `nomem` / `oom` / `err` / `error` / `cleanup`: the one
#                  label is `out` (a retry's `goto again` is not cleanup and is not flagged).
#
# Checked: src/**/*.c and python/src/*.c; comments and string literals are skipped.  ALLOW lists
# the files still written in the other idiom and how many such lines each may keep, at most: the
# list only shrinks.  A file over its count, or not listed, fails; one under it passes with a note
# to lower it (so a merge that converts code never breaks the check).
#
# Usage: scripts/check-idiom.sh [ROOT]            check
#        scripts/check-idiom.sh --counts [ROOT]   print "path count" for every file with hits
# Exit 0 when nothing is over ALLOW; 1 with one "file:line: ..." line each.
set -u
MODE=check
if [ "${1:-}" = "--counts" ]; then MODE=counts; shift; fi
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

# path  most lines still allowed in the other idiom (2026-12-01: the idiom chosen; files converted
# module by module; 2026-12-02: every file converted, so the list is empty and any chain test or
# other cleanup label fails)
ALLOW='
'

shopt -s nullglob globstar
files=(src/**/*.c python/src/*.c)
[ ${#files[@]} -gt 0 ] || { echo "check-idiom: no sources under $ROOT" >&2; exit 2; }

MODE="$MODE" ALLOW="$ALLOW" perl -e '
  my %allow;
  for (split /\n/, $ENV{ALLOW}) { $allow{$1} = $2 if /^\s*(\S+)\s+(\d+)\s*$/; }
  my $counts = $ENV{MODE} eq "counts";
  my $bad = 0;
  for my $f (@ARGV) {
    open(my $fh, "<", $f) or die "$f: $!\n";
    local $/; my $s = <$fh>; close $fh;
    $s =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{ (my $m = $1) =~ s/[^\n]/ /g; $m }gse;
    my @lines = split /\n/, $s, -1;
    my @hits;
    # one pass per function: a body runs from a line outside any body that ends in "{" (the last
    # line of a signature, or an initializer, which holds nothing to flag) to the next "}" at
    # column 0; the `out:` label splits it
    my $i = 0;
    while ($i < @lines) {
      if ($lines[$i] =~ /\{\s*$/ && $lines[$i] !~ /^\s*#/) {
        my $start = $i; my $end = $i;
        $end++ while $end < @lines && $lines[$end] !~ /^\}/;
        my $out_at = -1;
        for my $j ($start .. $end) { if ($j < @lines && $lines[$j] =~ /^\s*out\s*:/) { $out_at = $j; last; } }
        for my $j ($start .. $end) {
          last if $j >= @lines;
          my $l = $lines[$j];
          if (($out_at < 0 || $j < $out_at) && $l =~ /(?<![A-Za-z0-9_])st\s*==\s*VF_OK(?![A-Za-z0-9_])/) {
            push @hits, [$j + 1, "chain test of st before out: (use VF_TRY / VF_FAIL)"];
          }
          if ($l =~ /(?<![A-Za-z0-9_])goto\s+(fail|done|nomem|oom|err|error|cleanup)\s*;/) {
            push @hits, [$j + 1, "goto $1: the one cleanup label is out"];
          }
        }
        $i = $end + 1;
      } else { $i++; }
    }
    next unless @hits;
    my $n = scalar @hits;
    if ($counts) { print "$f $n\n"; next; }
    if (!exists $allow{$f}) {
      print "$f:$_->[0]: $_->[1] (scripts/check-idiom.sh)\n" for @hits;
      $bad = 1;
    } elsif ($n > $allow{$f}) {
      print "$f:$_->[0]: $_->[1]: $f may keep $allow{$f}, has $n (scripts/check-idiom.sh)\n" for @hits;
      $bad = 1;
    } elsif ($n < $allow{$f}) {
      print "check-idiom: note: $f has $n lines in the other idiom, fewer than the $allow{$f} allowed: lower its ALLOW count\n";
    }
    delete $allow{$f};
  }
  exit 0 if $counts;
  for my $f (sort keys %allow) {
    print "check-idiom: note: $f is in the one idiom now (or is gone): drop it from ALLOW\n";
  }
  exit $bad;
' "${files[@]}"
rc=$?
[ "$MODE" = counts ] && exit $rc
if [ "$rc" -ne 0 ]; then
  echo "check-idiom: code in the other cleanup idiom found" >&2
  exit 1
fi
echo "check-idiom: ok (${#files[@]} files)"
