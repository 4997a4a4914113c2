# bench/plot.gp - plot a collc-bench CSV like the figures of Träff's torus
# all-to-all paper: log-log, x = count ("Count (<unit>) <per>", e.g. MPI_INT
# per process), y = the minimum time in microseconds, one line per variant
# (native thick, black; variants with the point-to-point "linear" component
# dashed).
#
#   gnuplot -e "csv='in.csv'; png='out.png'; plottitle='MPI_Alltoall, ...'" bench/plot.gp
#   gnuplot -e "csv='in.csv'; png='out.png'; plottitle='MPI_Allreduce, ...';
#               unit='MPI_DOUBLE'; per='per process'" bench/plot.gp
#
# unit (default MPI_INT) and per (default "per process") name what a count
# counts: collc-bench's "# unit:" header line.
# Rows with count 0 cannot be drawn on a log axis and are left out.

if (!exists("csv") || !exists("png")) {
  print "usage: gnuplot -e \"csv='in.csv'; png='out.png'; plottitle='...'\" bench/plot.gp"
  exit status 2
}
if (!exists("plottitle")) plottitle = "MPI_Alltoall"
if (!exists("unit")) unit = "MPI_INT"
if (!exists("per")) per = "per process"

# Variants in order of first appearance. The variant (column 5) is the one
# quoted field of the CSV (it may hold commas, e.g. "recexch:-8,8"): split at
# the quotes, $1 is "collective,p,count,bytes," and $3 ",min_us,...".
variants = system(sprintf("awk -F'\"' 'NR > 1 && !seen[$2]++ {printf \"%%s \", $2}' '%s'", csv))
colors = "black #1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
color(i) = word(colors, (i - 1) % words(colors) + 1)
rows(v) = sprintf("< awk -F'\"' -v v='%s' 'NR > 1 && $2 == v {split($1, a, \",\"); split($3, b, \",\"); if (a[3] > 0) print a[3], b[2]}' '%s'", v, csv)

set terminal pngcairo size 1100,750 font ",11"
set output png
set title plottitle noenhanced
set logscale xy
set format x "10^{%L}"
set xlabel "Count (" . unit . ") " . per noenhanced
set ylabel "Time (microseconds), min over repetitions of the slowest rank"
set grid xtics ytics mytics
set key outside right top noenhanced
set offsets graph 0.02, graph 0.02, 0, 0

plot for [i = 1:words(variants)] rows(word(variants, i)) using 1:2 \
       with linespoints title word(variants, i) \
       lc rgb color(i) pt ((i - 1) % 13 + 1) \
       lw (word(variants, i) eq "native" ? 3 : 1.5) \
       dt 1 + (strstrt(word(variants, i), "linear") > 0)
