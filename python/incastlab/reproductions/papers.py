"""The papers incastlab reproduces, cited as a reader finds them: authors, title, venue, year.

Experiments name theirs by key (``cites = ["chen2012"]`` in ``experiment.toml``); verdicts
and documentation print :func:`citation`. One table, so a citation is written once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    authors: str
    title: str
    venue: str
    #: None where the source carries no date of its own.
    year: int | None
    #: How the text refers to it in passing ("Chen et al.").
    short: str

    def __str__(self) -> str:
        when = f", {self.year}" if self.year else ""
        stop = "" if self.title[-1] in "?!." else "."
        return f'{self.authors}. "{self.title}{stop}" {self.venue}{when}.'


PAPERS: dict[str, Paper] = {
    "chen2012": Paper(
        "Yanpei Chen, Rean Griffith, David Zats, Randy H. Katz",
        "Understanding TCP Incast and Its Implications for Big Data Workloads",
        "Technical Report UCB/EECS-2012-40, EECS Department, University of California, Berkeley",
        2012,
        "Chen et al.",
    ),
    "vasudevan2009": Paper(
        "Vijay Vasudevan, Amar Phanishayee, Hiral Shah, Elie Krevat, David G. Andersen, "
        "Gregory R. Ganger, Garth A. Gibson, Brian Mueller",
        "Safe and Effective Fine-grained TCP Retransmissions for Datacenter Communication",
        "ACM SIGCOMM",
        2009,
        "Vasudevan et al.",
    ),
    "phanishayee2008": Paper(
        "Amar Phanishayee, Elie Krevat, Vijay Vasudevan, David G. Andersen, Gregory R. Ganger, "
        "Garth A. Gibson, Srinivasan Seshan",
        "Measurement and Analysis of TCP Throughput Collapse in Cluster-based Storage Systems",
        "USENIX FAST",
        2008,
        "Phanishayee et al.",
    ),
    "hafeez2015": Paper(
        "Ubaid Ullah Hafeez, Aqsa Kashaf, Qurat-ul-ann Bajwa, Hassan Zaidi, Ihsan Ayyub Qazi, "
        "Zartash Afzal Uzmi, Aisha Mushtaq",
        "Mitigating Datacenter Incast Congestion Using RTO Randomization",
        "IEEE GLOBECOM",
        2015,
        "Hafeez et al.",
    ),
    "olteanu2022": Paper(
        "Vladimir Olteanu, Haggai Eran, Dragos Dumitrescu, Adrian Popa, Cristi Baciu, "
        "Mark Silberstein, Georgios Nikolaidis, Mark Handley, Costin Raiciu",
        "An Edge-Queued Datagram Service for All Datacenter Traffic",
        "USENIX NSDI",
        2022,
        "Olteanu et al. (EQDS)",
    ),
    "kumar2020": Paper(
        "Gautam Kumar, Nandita Dukkipati, Keon Jang, Hassan M. G. Wassel, Xian Wu, "
        "Behnam Montazeri, Yaogong Wang, Kevin Springborn, Christopher Alfeld, Michael Ryan, "
        "David Wetherall, Amin Vahdat",
        "Swift: Delay is Simple and Effective for Congestion Control in the Datacenter",
        "ACM SIGCOMM",
        2020,
        "Kumar et al. (Swift)",
    ),
    "fritchie": Paper(
        "Scott Lystig Fritchie",
        "TCP incast: What is it? How can it affect Erlang applications?",
        "Blog post on Riak over gigabit Ethernet (its measurements are dated December 2011)",
        None,
        "Fritchie",
    ),
    "handley2017": Paper(
        "Mark Handley, Costin Raiciu, Alexandru Agache, Andrei Voinescu, Andrew W. Moore, "
        "Gianni Antichi, Marcin Wójcik",
        "Re-architecting Datacenter Networks and Stacks for Low Latency and High Performance",
        "ACM SIGCOMM",
        2017,
        "Handley et al. (NDP)",
    ),
    "alizadeh2010": Paper(
        "Mohammad Alizadeh, Albert Greenberg, David A. Maltz, Jitendra Padhye, Parveen Patel, "
        "Balaji Prabhakar, Sudipta Sengupta, Murari Sridharan",
        "Data Center TCP (DCTCP)",
        "ACM SIGCOMM",
        2010,
        "Alizadeh et al.",
    ),
    "zhu2015": Paper(
        "Yibo Zhu, Haggai Eran, Daniel Firestone, Chuanxiong Guo, Marina Lipshteyn, "
        "Yehonatan Liron, Jitendra Padhye, Shachar Raindel, Mohamad Haj Yahia, Ming Zhang",
        "Congestion Control for Large-Scale RDMA Deployments",
        "ACM SIGCOMM",
        2015,
        "Zhu et al. (DCQCN)",
    ),
    "montazeri2018": Paper(
        "Behnam Montazeri, Yilong Li, Mohammad Alizadeh, John Ousterhout",
        "Homa: A Receiver-Driven Low-Latency Transport Protocol Using Network Priorities",
        "ACM SIGCOMM",
        2018,
        "Montazeri et al. (Homa)",
    ),
    "li2019": Paper(
        "Yuliang Li, Rui Miao, Hongqiang Harry Liu, Yan Zhuang, Fei Feng, Lingbo Tang, "
        "Zheng Cao, Ming Zhang, Frank Kelly, Mohammad Alizadeh, Minlan Yu",
        "HPCC: High Precision Congestion Control",
        "ACM SIGCOMM",
        2019,
        "Li et al. (HPCC)",
    ),
}


def citation(key: str) -> str:
    """The full citation of paper ``key``; KeyError naming the known keys otherwise."""
    if key not in PAPERS:
        raise KeyError(f"unknown paper {key!r}; known: {', '.join(PAPERS)}")
    return str(PAPERS[key])
