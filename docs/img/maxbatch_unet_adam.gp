# remat maxbatch: unet: largest batch on 16000000000 B (14.90 GiB), adam
# Re-plot in this folder with: gnuplot maxbatch_unet_adam.gp
if (!exists("outfile")) outfile = 'maxbatch_unet_adam.svg'
if (!exists("datafile")) datafile = 'maxbatch_unet_adam.dat'
set terminal svg size 900,560 font 'Helvetica,12' background rgb 'white'
set termoption noenhanced
set output outfile
set title 'unet: largest batch on 16000000000 B (14.90 GiB), adam'
set ylabel 'largest batch that fits'
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -30 nomirror
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.12, 0
set grid ytics
set key top left
plot datafile using 1:3:xtic(2) with boxes lc rgb '#0072B2' title 'largest feasible batch', \
     datafile using 1:3:(sprintf('%d', $3)) with labels offset 0,0.8 notitle

unset output
