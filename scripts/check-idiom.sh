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

# path  most lines still allowed in the other idiom (2026-12-01: the idiom chosen; files convert
# module by module)
ALLOW='
python/src/vforge_module.c 38
src/cli/cli_text.c 3
src/cli/cmd_bench.c 50
src/cli/cmd_cat.c 13
src/cli/cmd_convert.c 11
src/cli/cmd_dist.c 23
src/cli/cmd_eval.c 37
src/cli/cmd_index.c 91
src/cli/cmd_inspect.c 8
src/cli/cmd_load.c 27
src/cli/cmd_plot.c 8
src/cli/main.c 5
src/corpus/arrow_export.c 32
src/corpus/bundle.c 16
src/corpus/config.c 23
src/corpus/config_datasource.c 4
src/corpus/config_get.c 8
src/corpus/config_render.c 20
src/corpus/config_yaml.c 1
src/corpus/convert.c 4
src/corpus/corpus_read.c 27
src/corpus/dataset.c 27
src/corpus/dataset_read.c 25
src/corpus/discover.c 4
src/corpus/filter.c 33
src/corpus/filter_eval.c 2
src/corpus/filter_json.c 10
src/corpus/idexpr.c 2
src/corpus/plan.c 3
src/corpus/read_vectors.c 27
src/corpus/records.c 39
src/corpus/source.c 22
src/dist/dist_engine.c 38
src/dist/dist_plan.c 73
src/dist/dist_run.c 113
src/eval/bench.c 24
src/eval/bench_check.c 13
src/eval/bench_plot.c 3
src/eval/bench_read.c 45
src/eval/bench_results.c 70
src/eval/bench_sweep.c 11
src/eval/bench_target.c 16
src/eval/bf_common.c 5
src/eval/bf_filter.c 9
src/eval/bf_merge.c 89
src/eval/bruteforce.c 53
src/eval/ivf_filter.c 13
src/eval/queries.c 51
src/eval/queries_filter.c 27
src/format/fbin.c 6
src/format/hdf5.c 13
src/format/idx.c 8
src/format/npy.c 12
src/format/pqt_codec.c 3
src/format/pqt_meta.c 30
src/format/pqt_page.c 2
src/format/pqt_reader.c 22
src/format/pqt_rows.c 12
src/format/pqt_slice.c 7
src/format/pqt_thrift.c 7
src/format/pqt_variant.c 9
src/format/pqt_writer.c 6
src/index/ivf_build.c 4
src/index/ivf_codes.c 4
src/index/ivf_corpus.c 34
src/index/ivf_file.c 6
src/index/ivf_search.c 1
src/index/kmeans.c 4
src/io/hf.c 14
src/io/httpsrc.c 8
src/io/remote.c 4
src/io/s3.c 49
src/io/s3_creds.c 36
src/io/s3_xml.c 31
src/io/uri.c 15
src/load/load.c 58
src/load/load_admin.c 7
src/load/pipeline.c 15
src/load/state.c 16
src/store/discard.c 1
src/store/local.c 22
src/store/local_compact.c 3
src/store/local_dir.c 20
src/store/local_filter.c 11
src/store/local_ids.c 5
src/store/local_index.c 31
src/store/local_scan.c 6
src/store/local_write.c 15
src/store/payload_kinds.c 1
src/store/qdrant.c 98
src/store/qdrant_grpc.c 29
src/store/qdrant_pb.c 103
src/store/store.c 7
src/util/atomic.c 6
src/util/json_read.c 1
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
