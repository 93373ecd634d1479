# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the benchmark scripts: the medians of figures read one a line
# on standard input, one name for each way of taking it.

# median: the middle figure, or the mean of the two middle ones when the
# count is even.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# median_low: the middle figure, or the lower of the two middle ones: always
# a figure that was measured.
median_low() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# median_low_of_runs: median_low over the lines that are not "failed"
# (rounds that gave no figure); "failed" when every one was.
median_low_of_runs() { grep -v failed | sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "failed" }'; }
