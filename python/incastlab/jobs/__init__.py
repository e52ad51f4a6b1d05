"""What incast costs big-data jobs: a MapReduce job model over the packet-level simulator.

- :mod:`~incastlab.jobs.hadoop`: Chen et al.'s Table 2 settings and the machine constants;
- :mod:`~incastlab.jobs.network`: fan-in times from the simulator, memoized and extrapolated;
- :mod:`~incastlab.jobs.job`: a job as map and reduce tasks, a task as phases;
- :mod:`~incastlab.jobs.scheduler`: jobs sharing the cluster's slots;
- :mod:`~incastlab.jobs.standalone`: the article's four stand-alone jobs;
- :mod:`~incastlab.jobs.swim`: SWIM traces (FB-2009), their scaling and a generator;
- :mod:`~incastlab.jobs.replay`: a trace replayed under two RTOmin values.
"""
