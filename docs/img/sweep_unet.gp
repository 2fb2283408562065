# remat sweep of unet (batch 32, 416x608x3)
# Re-plot in this folder with: gnuplot sweep_unet.gp
if (!exists("outfile")) outfile = 'sweep_unet.svg'
if (!exists("datafile")) datafile = 'sweep_unet.dat'
set terminal svg size 1000,600 font 'Helvetica,12' background rgb 'white'
set termoption noenhanced
set output outfile
set title 'unet (batch 32, 416x608x3): compute overhead vs memory budget'
set xlabel 'activation budget (GiB)'
set ylabel 'overhead (cost / no-remat cost)'
set key outside right top
set grid
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot datafile using 2:3 with lines lw 2 dt 2 lc rgb 'black' title 'LP lower bound', \
     datafile using 2:4 with linespoints lw 1.5 lc rgb '#0072B2' pt 7 ps 0.9 title 'checkpoint-all', \
     datafile using 2:5 with linespoints lw 1.5 lc rgb '#D55E00' pt 5 ps 0.9 title 'chen-sqrtn-ap', \
     datafile using 2:6 with linespoints lw 1.5 lc rgb '#009E73' pt 9 ps 0.9 title 'chen-sqrtn-linear', \
     datafile using 2:7 with linespoints lw 1.5 lc rgb '#CC79A7' pt 11 ps 0.9 title 'chen-greedy-ap', \
     datafile using 2:8 with linespoints lw 1.5 lc rgb '#E69F00' pt 13 ps 0.9 title 'chen-greedy-linear', \
     datafile using 2:9 with linespoints lw 1.5 lc rgb '#56B4E9' pt 1 ps 0.9 title 'griewank-logn', \
     datafile using 2:10 with linespoints lw 1.5 lc rgb '#8C564B' pt 2 ps 0.9 title 'griewank', \
     datafile using 2:11 with linespoints lw 1.5 lc rgb '#7F7F7F' pt 3 ps 0.9 title 'evict', \
     datafile using 2:12 with linespoints lw 1.5 lc rgb '#BCBD22' pt 4 ps 0.9 title 'local-search', \
     datafile using 2:13 with linespoints lw 1.5 lc rgb '#332288' pt 6 ps 0.9 title 'approx', \
     datafile using 2:14 with linespoints lw 1.5 lc rgb '#0072B2' pt 7 ps 0.9 title 'approx-randomized', \
     datafile using 2:15 with linespoints lw 1.5 lc rgb '#D55E00' pt 5 ps 0.9 title 'optimal'

unset output
