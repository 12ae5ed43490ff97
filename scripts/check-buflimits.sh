#!/usr/bin/env bash
# check-buflimits.sh — every growable buffer has a named ceiling (issue 15; curl's dynbuf
# `toobig`): a new `vf_buf_init(&b, 0)` (0 means VF_BUF_DEFAULT_MAX, 1 TiB) fails.
#
# Use instead: VF_BUF_INIT(&b, VF_BUF_MAX_...) with the include/vforge/util.h name that fits
# what the buffer holds (or a module's own VF_BUF_INIT-able name, with its one-line rationale);
# growing past it is VF_ENOMEM naming the limit.  docs/DESIGN.md "Extensions" has the table.
#
# Flagged: vf_buf_init / vf_buf_init_named / VF_BUF_INIT whose ceiling is 0, 0u, (size_t)0 or
# VF_BUF_DEFAULT_MAX, in src/**/*.{c,h} and python/src/*.{c,h}; comments and string literals are
# skipped.  ALLOW lists the files that still hold such calls and how many, at most: the list only
# shrinks.  A file over its count, or not listed, fails; one under its count passes with a note
# to lower it (so a merge that removes calls never breaks the check).
#
# Usage: scripts/check-buflimits.sh [ROOT]
# Exit 0 when no unnamed ceiling is left outside ALLOW; 1 with one "file:line: ..." line each.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

# path  most calls still allowed (2026-12: every file has named ceilings; the list stays empty)
ALLOW='
'

shopt -s nullglob globstar
files=(src/**/*.c src/**/*.h python/src/*.c python/src/*.h)
[ ${#files[@]} -gt 0 ] || { echo "check-buflimits: no sources under $ROOT" >&2; exit 2; }

ALLOW="$ALLOW" perl -e '
  my %allow;
  for (split /\n/, $ENV{ALLOW}) { $allow{$1} = $2 if /^\s*(\S+)\s+(\d+)\s*$/; }
  my $bad = 0;
  for my $f (@ARGV) {
    open(my $fh, "<", $f) or die "$f: $!\n";
    local $/; my $s = <$fh>; close $fh;
    # blank out comments and string/char literals, keeping the newlines (line numbers hold)
    $s =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{ (my $m = $1) =~ s/[^\n]/ /g; $m }gse;
    my @hits;
    while ($s =~ /(?<![A-Za-z0-9_])(vf_buf_init|vf_buf_init_named|VF_BUF_INIT)\s*\(\s*[^,;()]*(?:\([^,;()]*\)[^,;()]*)*,\s*(0[uU]?|\(\s*size_t\s*\)\s*0|VF_BUF_DEFAULT_MAX)\s*[,)]/g) {
      my $line = 1 + (substr($s, 0, $-[0]) =~ tr/\n//);
      push @hits, $line;
    }
    next unless @hits;
    my $n = scalar @hits;
    if (!exists $allow{$f}) {
      print "$f:$_: unnamed buffer ceiling (0 = 1 TiB) — use VF_BUF_INIT(&b, VF_BUF_MAX_...) (scripts/check-buflimits.sh)\n" for @hits;
      $bad = 1;
    } elsif ($n > $allow{$f}) {
      print "$f:$_: unnamed buffer ceiling (0 = 1 TiB): $f may keep $allow{$f}, has $n — use VF_BUF_INIT(&b, VF_BUF_MAX_...) (scripts/check-buflimits.sh)\n" for @hits;
      $bad = 1;
    } elsif ($n < $allow{$f}) {
      print "check-buflimits: note: $f has $n unnamed ceilings, fewer than the $allow{$f} allowed: lower its ALLOW count\n";
    }
    delete $allow{$f};
  }
  for my $f (sort keys %allow) {
    print "check-buflimits: note: $f has no unnamed ceiling left (or is gone): drop it from ALLOW\n";
  }
  exit $bad;
' "${files[@]}"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "check-buflimits: vf_buf_init with an unnamed ceiling found" >&2
  exit 1
fi
echo "check-buflimits: ok (${#files[@]} files)"
