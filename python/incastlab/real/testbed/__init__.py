"""The emulation's testbed: network namespaces on a bridge, shaped by tc, with the hosts' TCP
sysctls, and what is read from it. Every workload's driver (:mod:`incastlab.real.sync_read`,
:mod:`~incastlab.real.kv`, :mod:`~incastlab.real.shuffle`) builds one and reads it through
these modules' public functions:

- :mod:`.build`: the testbed itself (namespaces, veths, bridge, routes, tbf shapers,
  sysctls), built for a scenario and removed afterwards whatever happens;
- :mod:`.kernel`: what the kernel runs, read back (release, HZ, sysctls, offloads, qdiscs,
  the sockets' congestion control) and the idle testbed's base round trip;
- :mod:`.counters`: TCP counters, qdisc counters and CPU time, read before and after a run;
- :mod:`.captures`: tcpdump on the bottleneck and the hosts, and the receiver's monitor;
- :mod:`.simulator`: the testbed as the simulator should be told it (RTT, noise, framing,
  protocol, NICs, ports, the kernel's tick on a profile).
"""
