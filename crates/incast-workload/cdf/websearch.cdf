# Web search: the flow sizes of the background traffic of a production web-search cluster
# (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010), as the HPCC paper ran them
# ("WebSearch": Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §2.3, §5.1).
#
# Where the points come from: only numbers the HPCC paper prints. Its Figures 3 and 10 label
# their flow-size axes with ten sizes, the size at every tenth percentile of the flows, 10% to
# 100% (the text does not say so; for FB_Hadoop, Figure 11's ninth label, 120K, is §5.3's "90%
# of the flows are shorter than 120KB"). K and M read as 10^3 and 10^6:
#     6.7K  20K  30K  50K  73K  200K  1M  2M  5M  30M
# Nothing between these deciles is printed. DCTCP's own Figure 4 (§2.2: the PDF of the background
# flows' sizes) was read afterwards, to compare, not to build this table: the coordinates of its
# plotted points taken from the paper's PDF (a vector figure), mapped through its axes' tick marks
# (log size 10^3..10^8 B, PDF 0..0.1), each point read as one bin's share of the flows (the 49
# shares sum to 1.00; consecutive sizes are 1.22x apart), spread log-uniformly over its bin.
# That reading's deciles: 9.2K 20K 31K 48K 71K 300K 1.0M 2.2M 5.0M, the largest flows near 25M;
# mean 1.49 MB. It agrees with the table within 0.03 of cumulative probability everywhere but
# below ~5 KB, where the figure has no flows and the table's first decile starts at 2,244 B
# (0.064 at 4.5 KB); the largest gap above is at 10 MB (0.939 here, 0.97 in the figure), so this
# table's mean is 1.31x the figure's. Its points are not copied here.
#
# Interpolation (our choice): log-uniform within each decile, a straight CDF between two labels
# on a log-size axis. This parser is uniform between points, so the decile from size a to
# size b, probability q to q + 0.1, is written as 8 steps, j = 1..8 (j = 0 for the first):
#     size = round(a * (b / a)^(j / 8)),   probability = q + j / 80
# The first decile's low end (probability 0) is an assumption: a = 6700^2 / 20000 = 2244 B
# (rounded down), the first decile as wide on the log axis as the second. The mean hardly
# depends on it (1.9495 MB with a = 1 B).
#
# Mean of this CDF (uniform between the points below): 1.950 MB (exactly log-uniform within
# each decile: 1.943 MB). The last decile, 5 MB to 30 MB, carries 72% of it.
#
# These are not the HPCC authors' published points. Their repository's distribution for this
# workload (the one their simulations drew from) has the same ten deciles but is linear in size
# between coarser points, mean 1.711 MB: this table's mean is 1.14x theirs. The two CDFs differ
# by at most 0.034 (at 2,244 B: their file puts 3.4% of the flows below it, this table none);
# in the tail by at most 0.031 (at 10 MB: 0.939 here, 0.970 there). To run exactly the authors'
# sizes, give their file to flows.size_cdf (docs/simulate.md says how).
#
# bytes     cumulative probability
2244        0
2573        0.0125
2950        0.025
3382        0.0375
3877        0.05
4446        0.0625
5097        0.075
5844        0.0875
6700        0.1
7681        0.1125
8807        0.125
10097       0.1375
11576       0.15
13272       0.1625
15216       0.175
17445       0.1875
20000       0.2
21040       0.2125
22134       0.225
23284       0.2375
24495       0.25
25768       0.2625
27108       0.275
28517       0.2875
30000       0.3
31978       0.3125
34087       0.325
36334       0.3375
38730       0.35
41284       0.3625
44006       0.375
46907       0.3875
50000       0.4
52422       0.4125
54961       0.425
57624       0.4375
60415       0.45
63342       0.4625
66410       0.475
69627       0.4875
73000       0.5
82801       0.5125
93918       0.525
106528      0.5375
120830      0.55
137053      0.5625
155454      0.575
176326      0.5875
200000      0.6
244569      0.6125
299070      0.625
365716      0.6375
447214      0.65
546873      0.6625
668740      0.675
817765      0.6875
1000000     0.7
1090508     0.7125
1189207     0.725
1296840     0.7375
1414214     0.75
1542211     0.7625
1681793     0.775
1834008     0.7875
2000000     0.8
2242707     0.8125
2514867     0.825
2820054     0.8375
3162278     0.85
3546031     0.8625
3976354     0.875
4458898     0.8875
5000000     0.9
6255167     0.9125
7825423     0.925
9789865     0.9375
12247449    0.95
15321967    0.9625
19168293    0.975
23980175    0.9875
30000000    1
