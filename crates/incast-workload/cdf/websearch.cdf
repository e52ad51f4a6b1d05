# Web search: the flow sizes of the background traffic of a production web-search cluster,
# Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4 (flow-size distribution of
# background traffic) and Section 2.3's text (most background flows are small, most bytes are
# in flows of 1 MB to tens of MB).
#
# A digitization, not the measured data: points read at round sizes on the figure's log axis,
# written for incastlab (not copied from another project's CDF file). They are the reading
# the later papers that use this workload share (pFabric, HPCC's "WebSearch"); they were not
# re-measured against the figure's image when this file was written.
#
# Mean of this CDF (uniform between points): 1.71 MB. Papers that use this workload quote a
# mean of about 1.6 MB (a figure recalled, not re-checked against a paper when this file was
# written); this digitization is about 7% above it: the 10-30 MB tail carries 35% of the
# mean, and the CDF's shape between those two points is not known.
#
# bytes     cumulative probability
1000        0
10000       0.15
20000       0.20
30000       0.30
50000       0.40
80000       0.53
200000      0.60
1000000     0.70
2000000     0.80
5000000     0.90
10000000    0.97
30000000    1
