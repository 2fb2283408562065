# remat approx-report of vgg16 (batch 256, 224x224x3)
# Re-plot in this folder with: gnuplot approx_vgg16.gp
if (!exists("outfile")) outfile = 'approx_vgg16.svg'
if (!exists("datafile")) datafile = 'approx_vgg16.dat'
set terminal svg size 1000,760 font 'Helvetica,12' background rgb 'white'
set termoption noenhanced
set output outfile
set multiplot layout 2,1 title 'vgg16 (batch 256, 224x224x3): LP rounding vs the optimum'
set grid
set key inside top right opaque box
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set ylabel 'overhead (cost / no-remat cost)'
set format x ''
plot datafile using 2:3 with lines lw 2 dt 2 lc rgb 'black' title 'LP lower bound', \
     datafile using 2:4 with linespoints lw 1.5 lc rgb '#332288' pt 6 ps 0.9 title 'optimal (MILP)', \
     datafile using 2:5 with linespoints lw 1.5 lc rgb '#D55E00' pt 5 ps 0.9 title 'deterministic rounding', \
     datafile using 2:6 with linespoints lw 1.5 lc rgb '#009E73' pt 9 ps 0.9 title 'randomized rounding (best of 20)'
unset label 1
set format x '%g'
set xlabel 'activation budget (GiB)'
set ylabel 'cost / optimal cost'
plot 1 with lines lc rgb 'black' dt 2 notitle, \
     datafile using 2:7 with linespoints lw 1.5 lc rgb '#D55E00' pt 5 ps 0.9 title 'deterministic rounding', \
     datafile using 2:8 with linespoints lw 1.5 lc rgb '#009E73' pt 9 ps 0.9 title 'randomized rounding (best of 20)'
unset multiplot

unset output
