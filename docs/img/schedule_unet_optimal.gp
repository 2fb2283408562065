# remat plot schedule schedule_unet_optimal.json
# Re-plot in this folder with: gnuplot schedule_unet_optimal.gp
if (!exists("outfile")) outfile = 'schedule_unet_optimal.svg'
if (!exists("datafile")) datafile = 'schedule_unet_optimal.dat'
set terminal svg size 1100,1000 font 'Helvetica,12' background rgb 'white'
set termoption noenhanced
set output outfile
set multiplot title 'unet (batch 32, 416x608x3): optimal, cost 1.14953e+13, peak 10.85 GiB'
set origin 0, 0.4
set size 0.5, 0.56
set title 'R: computed in stage'
set xrange [-0.5:70.5]
set yrange [70.5:-0.5]
set xlabel 'node'
set ylabel 'stage'
set key inside top right vertical opaque box
unset grid
plot datafile index 0 using 2:($3 == 1 ? $1 : NaN):(0.5):(0.5) with boxxyerror fs solid 1.0 noborder lc rgb '#0072B2' title 'computed (71)', \
     datafile index 0 using 2:($3 == 2 ? $1 : NaN):(0.5):(0.5) with boxxyerror fs solid 1.0 noborder lc rgb '#D55E00' title 'recomputed (31)'
set origin 0.5, 0.4
set size 0.5, 0.56
set title 'S: held into stage'
set xrange [-0.5:70.5]
set yrange [70.5:-0.5]
set xlabel 'node'
set ylabel 'stage'
set key inside top right vertical opaque box
unset grid
plot datafile index 1 using 2:1:(0.5):(0.5) with boxxyerror fs solid 1.0 noborder lc rgb '#009E73' title 'held (548)'
set origin 0, 0
set size 1, 0.40
set title 'memory over the operations of the plan'
set xrange [0:305]
set yrange [0:14.55191523]
set xlabel 'operation (allocate, compute, free)'
set ylabel 'live bytes (GiB)'
set key inside top right vertical
set grid
plot datafile index 2 using 1:4 with steps lw 1.5 lc rgb '#0072B2' title 'live memory (peak 10.85 GiB)', \
     11.64153218 with lines dt 2 lw 2 lc rgb '#D55E00' title 'budget 11.64 GiB'
unset multiplot

unset output
