# Hadoop: the flow sizes of a Facebook Hadoop cluster, Roy et al., "Inside the Social
# Network's (Datacenter) Network", SIGCOMM 2015, Fig. 6 (flow-size distribution, Hadoop) and
# Section 6.1's text (Hadoop flows are mostly small: most carry well under 10 KB, a few per
# cent carry megabytes).
#
# A coarse digitization, not the measured data: points read at decade sizes, written for
# incastlab (not copied from another project's CDF file); not re-measured against the
# figure's image when this file was written, so treat the tail (where the mean lives) as
# uncertain to a factor of about 1.5.
#
# Mean of this CDF (uniform between points): 364 KB. Papers that use this workload
# quote means of a few hundred KB; no single quoted mean was checked for this file.
#
# bytes     cumulative probability
100         0
1000        0.50
10000       0.70
100000      0.80
1000000     0.95
10000000    1
