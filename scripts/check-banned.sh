#!/usr/bin/env bash
# check-banned.sh — libc calls the library, the CLI and the Python extension may not make
# (docs/DESIGN.md "Layers"; curl's checksrc ban list):
#
#   unsafe (no bound on the output):     sprintf vsprintf strcpy strcat gets
#   not thread-safe (static state):      strerror strtok localtime gmtime ctime asctime rand
#   no error report (0 for garbage):     atoi atol atoll atof
#
# Use instead: snprintf / vsnprintf / vf_buf_printf, memcpy with a checked length or
# vf_strdup, VF_STRERROR(errno) (util.h, over strerror_r), strtok_r, localtime_r / gmtime_r,
# getrandom or a seeded generator of your own, strtol / strtoull / strtod with an end pointer
# and range checks.
#
# Checked: src/**/*.{c,h}, include/vforge/*.h, python/src/*.{c,h}; comments and string literals
# are not code and are skipped.  Tests and bench/ are tools, not shipped code, and are not checked.
#
# Usage: scripts/check-banned.sh [ROOT]
# Exit 0 when no banned call is left; 1 with one "file:line: banned call: ..." line per use.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

shopt -s nullglob globstar
files=(src/**/*.c src/**/*.h include/vforge/*.h python/src/*.c python/src/*.h)
[ ${#files[@]} -gt 0 ] || { echo "check-banned: no sources under $ROOT" >&2; exit 2; }

perl -e '
  my %instead = (
    sprintf => "snprintf or vf_buf_printf", vsprintf => "vsnprintf",
    strcpy => "memcpy with a checked length, or vf_strdup", strcat => "vf_buf_append or snprintf",
    gets => "fgets", strerror => "VF_STRERROR(errno) (util.h, strerror_r)",
    strtok => "strtok_r", localtime => "localtime_r", gmtime => "gmtime_r",
    ctime => "localtime_r and strftime", asctime => "strftime", rand => "a seeded generator or getrandom",
    atoi => "strtol with an end pointer and range checks", atol => "strtol with checks",
    atoll => "strtoll with checks", atof => "strtod with an end pointer",
  );
  my $names = join("|", sort keys %instead);
  my $bad = 0;
  for my $f (@ARGV) {
    open(my $fh, "<", $f) or die "$f: $!\n";
    local $/; my $s = <$fh>; close $fh;
    # blank out comments and string/char literals, keeping the newlines (line numbers hold)
    $s =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{ (my $m = $1) =~ s/[^\n]/ /g; $m }gse;
    my $line = 1;
    for my $l (split /\n/, $s, -1) {
      while ($l =~ /(?<![A-Za-z0-9_.>])($names)\s*\(/g) {
        print "$f:$line: banned call: $1() — use $instead{$1} (scripts/check-banned.sh)\n";
        $bad = 1;
      }
      $line++;
    }
  }
  exit $bad;
' "${files[@]}"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "check-banned: banned libc calls found" >&2
  exit 1
fi
echo "check-banned: ok (${#files[@]} files)"
