#!/usr/bin/env python3
"""
ns-3 (pip package `ns3`, cppyy bindings) reference runs for the TCP incast comparison.

Part 1 (--mode sync): classic synchronized-read incast.
  Star: N senders + 1 receiver, each attached to one switch node by a 1 Gbps /
  25 us point-to-point link (base RTT 100 us), IPv4 global routing on the switch.
  Only ONE finite queue in front of the receiver: the switch's PointToPointNetDevice
  DropTailQueue towards the receiver, MaxSize = 64000 bytes (byte mode). The
  traffic-control layer's default root queue disc (fq_codel) is uninstalled on every
  device, so the device queue is the only queue. All other device queues are 10000p.
  TCP: NewReno (or LinuxReno), SACK on, timestamps on, MSS 1448, IW 10,
  DelAckCount 1, MinRto 200 ms / 1 ms, ClockGranularity 1 us, 4 MB buffers.
  Workload: the receiver (client) keeps one TCP connection to every sender (server);
  20 blocks; each block: 100 B request on every connection, every server answers
  with 256000 B, next block when all N responses are complete.

Part 2 (--mode burst): N senders each send one 270000 B flow to one receiver at the
  same time; 10 Gbps links, 1 us propagation per link, 1 MB drop-tail bottleneck,
  MSS 8948 (MTU 9000), IW 10, MinRto 200 ms.

Usage:
  python incast_ns3.py                      # all part-1 runs (each in a subprocess)
  python incast_ns3.py --part2              # part-2 runs (N=100, 1000)
  python incast_ns3.py --mode sync --n 16 --minrto-us 200000   # one run, one line
"""

import argparse
import json
import os
import subprocess
import sys
import time

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/point-to-point-module.h"
#include <vector>
#include <algorithm>

namespace incastcmp {
using namespace ns3;

// ---------------- global counters (one scenario per process) ----------------
static uint64_t g_lossEntries = 0;   // CongState transitions into CA_LOSS (= RTO episodes)
static uint64_t g_rtoFirings = 0;    // RTO doublings (every retransmission-timer expiry)
static uint64_t g_recoveryEntries = 0; // CongState transitions into CA_RECOVERY (fast retransmit)

static void CongStateCb(TcpSocketState::TcpCongState_t oldv, TcpSocketState::TcpCongState_t newv)
{
    if (newv == TcpSocketState::CA_LOSS && oldv != TcpSocketState::CA_LOSS) g_lossEntries++;
    if (newv == TcpSocketState::CA_RECOVERY && oldv != TcpSocketState::CA_RECOVERY) g_recoveryEntries++;
}
static void RtoCb(Time oldv, Time newv)
{
    // TcpSocketBase::ReTxTimeout does m_rto = Min(2*m_rto, 60 s); estimator updates
    // essentially never produce an exact doubling.
    Time d = oldv + oldv;
    if (d > Seconds(60)) d = Seconds(60);
    if (newv == d && newv != oldv) g_rtoFirings++;
}
static void HookTcpTraces(Ptr<Socket> s)
{
    bool ok = s->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateCb));
    ok = ok && s->TraceConnectWithoutContext("RTO", MakeCallback(&RtoCb));
    NS_ABORT_MSG_UNLESS(ok, "TCP trace not connected");
}
static uint64_t g_tcDrops[2] = {0, 0};  // [0]=switch TC layer, [1]=end hosts' TC layers
static void TcDrop0(Ptr<const Packet>) { g_tcDrops[0]++; }
static void TcDrop1(Ptr<const Packet>) { g_tcDrops[1]++; }
void HookTcDrops(Ptr<Node> n, bool isSwitch)
{
    Ptr<TrafficControlLayer> tc = n->GetObject<TrafficControlLayer>();
    bool ok = tc->TraceConnectWithoutContext("TcDrop", isSwitch ? MakeCallback(&TcDrop0) : MakeCallback(&TcDrop1));
    NS_ABORT_MSG_UNLESS(ok, "TcDrop trace not connected");
}
uint64_t TcDrops(int i) { return g_tcDrops[i]; }
uint64_t QdiscDrops(Ptr<NetDevice> d)
{
    Ptr<TrafficControlLayer> tc = d->GetNode()->GetObject<TrafficControlLayer>();
    Ptr<QueueDisc> q = tc->GetRootQueueDiscOnDevice(d);
    return q ? q->GetStats().nTotalDroppedPackets : 0;
}
uint64_t LossEntries() { return g_lossEntries; }
uint64_t RtoFirings() { return g_rtoFirings; }
uint64_t RecoveryEntries() { return g_recoveryEntries; }

// ---------------- Part 1: synchronized reads ----------------
// Server: on every complete 100-byte request, send respBytes back.
class SrServer
{
  public:
    SrServer(Ptr<Node> node, uint16_t port, uint32_t reqBytes, uint32_t respBytes)
        : m_reqBytes(reqBytes), m_respBytes(respBytes)
    {
        m_listen = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_listen->Listen();
        m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&SrServer::Accepted, this));
    }
    void Accepted(Ptr<Socket> s, const Address&)
    {
        m_sock = s;
        HookTcpTraces(s);
        s->SetRecvCallback(MakeCallback(&SrServer::Recv, this));
        s->SetSendCallback(MakeCallback(&SrServer::SendSpace, this));
    }
    void Recv(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            m_reqAcc += p->GetSize();
            while (m_reqAcc >= m_reqBytes)
            {
                m_reqAcc -= m_reqBytes;
                m_pending += m_respBytes;
            }
        }
        Push();
    }
    void SendSpace(Ptr<Socket>, uint32_t) { Push(); }
    void Push()
    {
        while (m_pending > 0)
        {
            uint32_t avail = m_sock->GetTxAvailable();
            if (avail == 0) break;
            uint32_t chunk = std::min<uint64_t>(std::min<uint64_t>(m_pending, avail), 1u << 20);
            int r = m_sock->Send(Create<Packet>(chunk));
            if (r <= 0) break;
            m_pending -= r;
        }
    }
    Ptr<Socket> m_listen, m_sock;
    uint32_t m_reqBytes, m_respBytes;
    uint64_t m_reqAcc = 0, m_pending = 0;
};

class SrClient
{
  public:
    SrClient(Ptr<Node> node, std::vector<Ipv4Address> servers, uint16_t port,
             uint32_t reqBytes, uint32_t respBytes, uint32_t blocks)
        : m_reqBytes(reqBytes), m_respBytes(respBytes), m_blocks(blocks)
    {
        m_n = servers.size();
        m_rx.assign(m_n, 0);
        for (uint32_t i = 0; i < m_n; i++)
        {
            Ptr<Socket> s = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
            s->Bind();
            s->SetConnectCallback(MakeCallback(&SrClient::Connected, this),
                                  MakeCallback(&SrClient::ConnFailed, this));
            s->SetRecvCallback(MakeCallback(&SrClient::Recv, this));
            m_socks.push_back(s);
            m_idx.push_back(i);
            s->Connect(InetSocketAddress(servers[i], port));
        }
    }
    uint32_t Index(Ptr<Socket> s)
    {
        for (uint32_t i = 0; i < m_n; i++) if (m_socks[i] == s) return i;
        NS_FATAL_ERROR("unknown socket");
        return 0;
    }
    void Connected(Ptr<Socket>)
    {
        if (++m_connected == m_n)
            Simulator::Schedule(MilliSeconds(1), &SrClient::StartBlock, this);
    }
    void ConnFailed(Ptr<Socket>) { NS_FATAL_ERROR("connect failed"); }
    void StartBlock()
    {
        if (m_block == 0) m_tStart = Simulator::Now();
        m_blockStart = Simulator::Now();
        m_done = 0;
        for (auto& s : m_socks) s->Send(Create<Packet>(m_reqBytes));
    }
    void Recv(Ptr<Socket> s)
    {
        uint32_t i = Index(s);
        uint64_t target = uint64_t(m_block + 1) * m_respBytes;
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            bool before = m_rx[i] >= target;
            m_rx[i] += p->GetSize();
            m_totalRx += p->GetSize();
            if (!before && m_rx[i] >= target) m_done++;
        }
        if (m_done == m_n)
        {
            m_done = 0;
            m_blockTimes.push_back((Simulator::Now() - m_blockStart).GetSeconds());
            m_block++;
            if (m_block == m_blocks)
            {
                m_tEnd = Simulator::Now();
                Simulator::Stop();
            }
            else
            {
                StartBlock();
            }
        }
    }
    std::vector<Ptr<Socket>> m_socks;
    std::vector<uint32_t> m_idx;
    std::vector<uint64_t> m_rx;
    std::vector<double> m_blockTimes;
    uint32_t m_n, m_reqBytes, m_respBytes, m_blocks;
    uint32_t m_connected = 0, m_block = 0, m_done = 0;
    uint64_t m_totalRx = 0;
    Time m_tStart, m_tEnd, m_blockStart;
};

// ---------------- Part 2: one-shot N-flow incast ----------------
class BurstSink
{
  public:
    BurstSink(Ptr<Node> node, uint16_t port, uint32_t flowBytes, uint32_t nflows)
        : m_flowBytes(flowBytes), m_nflows(nflows)
    {
        m_listen = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_listen->Listen();
        m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&BurstSink::Accepted, this));
    }
    void Accepted(Ptr<Socket> s, const Address&)
    {
        m_rx[PeekPointer(s)] = 0;
        s->SetRecvCallback(MakeCallback(&BurstSink::Recv, this));
        m_accepted.push_back(s);
    }
    void Recv(Ptr<Socket> s)
    {
        uint64_t& c = m_rx[PeekPointer(s)];
        Ptr<Packet> p;
        bool before = c >= m_flowBytes;
        while ((p = s->Recv())) c += p->GetSize();
        if (!before && c >= m_flowBytes)
        {
            m_fct.push_back(Simulator::Now().GetSeconds());
            if (++m_completed == m_nflows) { m_tLast = Simulator::Now(); Simulator::Stop(); }
        }
    }
    Ptr<Socket> m_listen;
    std::vector<Ptr<Socket>> m_accepted;
    std::map<Socket*, uint64_t> m_rx;
    std::vector<double> m_fct;
    uint32_t m_flowBytes, m_nflows, m_completed = 0;
    Time m_tLast;
};

class BurstSender
{
  public:
    BurstSender(Ptr<Node> node, Ipv4Address dst, uint16_t port, uint32_t bytes, Time tSend)
        : m_left(bytes)
    {
        m_sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_sock->Bind();
        HookTcpTraces(m_sock);
        m_sock->SetSendCallback(MakeCallback(&BurstSender::SendSpace, this));
        m_sock->Connect(InetSocketAddress(dst, port));
        Simulator::Schedule(tSend, &BurstSender::Go, this);
    }
    void Go() { m_go = true; Push(); }
    void SendSpace(Ptr<Socket>, uint32_t) { if (m_go) Push(); }
    void Push()
    {
        while (m_left > 0)
        {
            uint32_t avail = m_sock->GetTxAvailable();
            if (avail == 0) break;
            uint32_t chunk = std::min<uint64_t>(m_left, avail);
            int r = m_sock->Send(Create<Packet>(chunk));
            if (r <= 0) break;
            m_left -= r;
        }
    }
    Ptr<Socket> m_sock;
    uint64_t m_left;
    bool m_go = false;
};

// Keep objects alive for the whole run.
static std::vector<SrServer*> g_servers;
static SrClient* g_client = nullptr;
static BurstSink* g_sink = nullptr;
static std::vector<BurstSender*> g_senders;

SrClient* MakeSyncReadApps(NodeContainer senders, Ptr<Node> receiver,
                           std::vector<Ipv4Address> senderAddrs, uint32_t blocks,
                           uint32_t reqBytes, uint32_t respBytes)
{
    for (uint32_t i = 0; i < senders.GetN(); i++)
        g_servers.push_back(new SrServer(senders.Get(i), 5000, reqBytes, respBytes));
    g_client = new SrClient(receiver, senderAddrs, 5000, reqBytes, respBytes, blocks);
    return g_client;
}

BurstSink* MakeBurstApps(NodeContainer senders, Ptr<Node> receiver, Ipv4Address rxAddr,
                         uint32_t flowBytes, double tSendSec)
{
    g_sink = new BurstSink(receiver, 6000, flowBytes, senders.GetN());
    for (uint32_t i = 0; i < senders.GetN(); i++)
        g_senders.push_back(new BurstSender(senders.Get(i), rxAddr, 6000, flowBytes, Seconds(tSendSec)));
    return g_sink;
}

uint64_t DevQueueDrops(Ptr<NetDevice> d)
{
    return DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
}
uint64_t DevQueueMaxBytesSeen = 0;
void SetDevQueue(Ptr<NetDevice> d, std::string size)
{
    DynamicCast<PointToPointNetDevice>(d)->GetQueue()->SetMaxSize(QueueSize(size));
}
std::string DevQueueSize(Ptr<NetDevice> d)
{
    std::ostringstream os;
    os << DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetMaxSize();
    return os.str();
}
bool HasRootQdisc(Ptr<NetDevice> d)
{
    Ptr<TrafficControlLayer> tc = d->GetNode()->GetObject<TrafficControlLayer>();
    return tc && tc->GetRootQueueDiscOnDevice(d);
}
double Median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace incastcmp
"""


IC = None


def setup_ns(segsize, minrto_us, cc, recovery):
    import cppyy
    from ns import ns

    cppyy.include("ns3/point-to-point-module.h")
    cppyy.include("ns3/traffic-control-module.h")
    cppyy.include("ns3/internet-module.h")
    cppyy.cppdef(CPP)
    global IC
    IC = cppyy.gbl.incastcmp
    cs = ns.Config.SetDefault
    cs("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::" + cc))
    cs("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::" + recovery))
    cs("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segsize))
    cs("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    cs("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    # ns-3 default DataRetries=6 aborts a connection after 6 consecutive RTOs on the same
    # data (happens at N=47 with MinRto=1ms: 1,2,4,...,64 ms backoff all dropped). Linux
    # tcp_retries2=15; use a large value so no connection is ever given up.
    cs("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    cs("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 * 1024 * 1024))
    cs("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 * 1024 * 1024))
    cs("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    cs("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    cs("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MicroSeconds(minrto_us)))
    cs("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MicroSeconds(1)))
    return ns, cppyy


def build_star(ns, n, rate, delay, mtu, bottleneck_size, queue_mode="device"):
    """N senders + receiver, each with a p2p link to a switch node. Returns dict."""
    senders = ns.NodeContainer()
    senders.Create(n)
    rx = ns.NodeContainer()
    rx.Create(1)
    sw = ns.NodeContainer()
    sw.Create(1)
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(rx)
    stack.Install(sw)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(mtu))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("10000p"))

    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()
    all_devs = []
    sender_addrs = cppyy_vec_ipv4(ns, n)
    for i in range(n):
        d = p2p.Install(senders.Get(i), sw.Get(0))
        addr.SetBase(
            ns.Ipv4Address("10.%d.%d.0" % (1 + i // 250, i % 250)), ns.Ipv4Mask("255.255.255.0")
        )
        ifc = addr.Assign(d)
        sender_addrs.push_back(ifc.GetAddress(0))
        all_devs.append(d)
    d = p2p.Install(rx.Get(0), sw.Get(0))
    addr.SetBase(ns.Ipv4Address("10.250.0.0"), ns.Ipv4Mask("255.255.255.0"))
    rx_ifc = addr.Assign(d)
    all_devs.append(d)
    bottleneck = d.Get(1)  # switch-side device of the receiver link
    # Remove default fq_codel root queue discs everywhere -> device queues are the only queues.
    for dc in all_devs:
        tch.Uninstall(dc)
    if queue_mode == "device":
        # single byte-limited DropTail device queue at the switch port towards the receiver
        IC.SetDevQueue(bottleneck, bottleneck_size)
    else:
        # FIFO queue disc of bottleneck_size + 1-packet device queue on the switch port
        IC.SetDevQueue(bottleneck, "1p")
        q = ns.TrafficControlHelper()
        q.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.StringValue(bottleneck_size))
        q.Install(bottleneck)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    for dc in all_devs:
        for j in range(2):
            assert IC.HasRootQdisc(dc.Get(j)) == (
                queue_mode != "device" and dc.Get(j) == bottleneck
            )
    IC.HookTcDrops(sw.Get(0), True)
    for i in range(n):
        IC.HookTcDrops(senders.Get(i), False)
    IC.HookTcDrops(rx.Get(0), False)
    return dict(
        senders=senders,
        rx=rx,
        sw=sw,
        devs=all_devs,
        bottleneck=bottleneck,
        sender_addrs=sender_addrs,
        rx_addr=rx_ifc.GetAddress(0),
    )


def cppyy_vec_ipv4(ns, n):
    import cppyy

    v = cppyy.gbl.std.vector[ns.Ipv4Address]()
    v.reserve(n)
    return v


def run_sync(args):
    ns, cppyy = setup_ns(1448, args.minrto_us, args.cc, args.recovery)
    t_build0 = time.time()
    topo = build_star(ns, args.n, "1Gbps", "25us", 1500, args.buffer, args.queue_mode)
    client = IC.MakeSyncReadApps(
        topo["senders"], topo["rx"].Get(0), topo["sender_addrs"], args.blocks, 100, 256000
    )
    ns.Simulator.Stop(ns.Seconds(args.max_sim_s))
    t0 = time.time()
    ns.Simulator.Run()
    wall_run = time.time() - t0
    events = int(ns.Simulator.GetEventCount())
    # bottleneck drops = device-queue drops + drops at the switch's TC layer (packets refused
    # while the device queue is flow-controlled 'stopped') + queue-disc drops (qdisc mode)
    drops = int(IC.DevQueueDrops(topo["bottleneck"])) + int(IC.TcDrops(0))
    if args.queue_mode != "device":
        drops += int(IC.QdiscDrops(topo["bottleneck"]))
    other_drops = int(IC.TcDrops(1))
    for dc in topo["devs"]:
        for j in range(2):
            if dc.Get(j) != topo["bottleneck"]:
                other_drops += int(IC.DevQueueDrops(dc.Get(j)))
    blocks_done = int(client.m_block)
    span = (
        (client.m_tEnd - client.m_tStart).GetSeconds()
        if blocks_done == args.blocks
        else float("nan")
    )
    total = int(client.m_totalRx)
    goodput = total * 8 / span / 1e6 if blocks_done == args.blocks else float("nan")
    bt = list(client.m_blockTimes)
    res = dict(
        mode="sync",
        n=args.n,
        minrto_us=args.minrto_us,
        goodput_mbps=goodput,
        loss_episodes=int(IC.LossEntries()),
        rto_firings=int(IC.RtoFirings()),
        fast_recoveries=int(IC.RecoveryEntries()),
        drops=drops,
        other_drops=other_drops,
        blocks=blocks_done,
        sim_span_s=span,
        rx_bytes=total,
        block_min_ms=min(bt) * 1e3 if bt else None,
        block_med_ms=float(IC.Median(cppyy.gbl.std.vector["double"](bt))) * 1e3 if bt else None,
        block_max_ms=max(bt) * 1e3 if bt else None,
        events=events,
        wall_run_s=wall_run,
        wall_build_s=t0 - t_build0,
        bottleneck_queue=str(IC.DevQueueSize(topo["bottleneck"])),
    )
    ns.Simulator.Destroy()
    return res


def run_burst(args):
    seg = args.burst_seg
    mtu = seg + 52
    ns, _cppyy = setup_ns(seg, args.minrto_us, args.cc, args.recovery)
    t_build0 = time.time()
    topo = build_star(ns, args.n, "10Gbps", "1us", mtu, args.burst_queue, args.queue_mode)
    t_send = 0.01
    sink = IC.MakeBurstApps(topo["senders"], topo["rx"].Get(0), topo["rx_addr"], 270000, t_send)
    ns.Simulator.Stop(ns.Seconds(args.max_sim_s))
    t0 = time.time()
    ns.Simulator.Run()
    wall_run = time.time() - t0
    events = int(ns.Simulator.GetEventCount())
    fct = sorted(list(sink.m_fct))
    res = dict(
        mode="burst",
        n=args.n,
        seg=seg,
        completed=int(sink.m_completed),
        last_fct_ms=(fct[-1] - t_send) * 1e3 if fct else None,
        median_fct_ms=(fct[len(fct) // 2] - t_send) * 1e3 if fct else None,
        first_fct_ms=(fct[0] - t_send) * 1e3 if fct else None,
        drops=int(IC.DevQueueDrops(topo["bottleneck"]))
        + int(IC.TcDrops(0))
        + (int(IC.QdiscDrops(topo["bottleneck"])) if args.queue_mode != "device" else 0),
        other_drops=int(IC.TcDrops(1)),
        loss_episodes=int(IC.LossEntries()),
        rto_firings=int(IC.RtoFirings()),
        fast_recoveries=int(IC.RecoveryEntries()),
        events=events,
        wall_run_s=wall_run,
        wall_build_s=t0 - t_build0,
    )
    ns.Simulator.Destroy()
    return res


def one(args):
    t = time.time()
    res = run_sync(args) if args.mode == "sync" else run_burst(args)
    res["wall_total_in_proc_s"] = time.time() - t
    print("RESULT " + json.dumps(res), flush=True)


def spawn(extra):
    cmd = [sys.executable, os.path.abspath(__file__), *extra]
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["wall_process_s"] = wall
            return r
    sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["sync", "burst"])
    ap.add_argument("--n", type=int)
    ap.add_argument("--minrto-us", type=int, default=200000)
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--cc", default="TcpNewReno")
    ap.add_argument("--recovery", default="TcpPrrRecovery")
    ap.add_argument("--max-sim-s", type=float, default=600.0)
    ap.add_argument("--burst-seg", type=int, default=8948)
    ap.add_argument("--burst-queue", default="1000000B")
    ap.add_argument("--buffer", default="64000B", help="bottleneck drop-tail limit (sync mode)")
    ap.add_argument("--part2", action="store_true")
    ap.add_argument(
        "--queue-mode",
        choices=["device", "qdisc"],
        default="device",
        help="device: 64000B DropTail device queue, no qdisc (default); "
        "qdisc: 64000B FifoQueueDisc + 1p device queue",
    )
    ap.add_argument("--ns", default="1,2,4,8,16,32,47")
    ap.add_argument("--minrtos", default="200000,1000")
    args = ap.parse_args()
    if args.mode:
        one(args)
        return
    common = [
        "--queue-mode",
        args.queue_mode,
        "--cc",
        args.cc,
        "--recovery",
        args.recovery,
        "--blocks",
        str(args.blocks),
        "--buffer",
        args.buffer,
    ]
    if args.part2:
        ns_list = (
            [int(x) for x in args.ns.split(",")] if args.ns != "1,2,4,8,16,32,47" else [100, 1000]
        )
        print(
            "%6s %10s %12s %12s %8s %8s %8s %12s %9s"
            % (
                "N",
                "completed",
                "last_fct_ms",
                "med_fct_ms",
                "drops",
                "RTOs",
                "lossEp",
                "events",
                "wall_s",
            )
        )
        for n in ns_list:
            r = spawn(
                [
                    "--mode",
                    "burst",
                    "--n",
                    str(n),
                    "--minrto-us",
                    str(args.minrto_us),
                    "--burst-seg",
                    str(args.burst_seg),
                    "--burst-queue",
                    args.burst_queue,
                    *common,
                ]
            )
            if r is None:
                print("%6d FAILED" % n)
                continue
            print(
                "%6d %10d %12.3f %12.3f %8d %8d %8d %12d %9.2f   (process %.1fs)"
                % (
                    n,
                    r["completed"],
                    r["last_fct_ms"] or -1,
                    r["median_fct_ms"] or -1,
                    r["drops"],
                    r["rto_firings"],
                    r["loss_episodes"],
                    r["events"],
                    r["wall_run_s"],
                    r["wall_process_s"],
                ),
                flush=True,
            )
        return
    for mr in [int(x) for x in args.minrtos.split(",")]:
        print(
            f"# MinRto = {mr / 1000.0:g} ms, cc={args.cc}, recovery={args.recovery}, queue={args.queue_mode}"
        )
        print(
            "%4s %10s %6s %8s %7s %8s %9s %9s %9s %10s %8s %8s"
            % (
                "N",
                "goodput",
                "RTOs",
                "lossEp",
                "FR",
                "drops",
                "blk_min",
                "blk_med",
                "blk_max",
                "events",
                "wall_s",
                "proc_s",
            )
        )
        for n in [int(x) for x in args.ns.split(",")]:
            r = spawn(["--mode", "sync", "--n", str(n), "--minrto-us", str(mr), *common])
            if r is None:
                print("%4d FAILED" % n)
                continue
            print(
                "%4d %10.1f %6d %8d %7d %8d %9.3f %9.3f %9.3f %10d %8.2f %8.1f"
                % (
                    n,
                    r["goodput_mbps"],
                    r["rto_firings"],
                    r["loss_episodes"],
                    r["fast_recoveries"],
                    r["drops"],
                    r["block_min_ms"],
                    r["block_med_ms"],
                    r["block_max_ms"],
                    r["events"],
                    r["wall_run_s"],
                    r["wall_process_s"],
                ),
                flush=True,
            )
            if r["other_drops"]:
                print("     WARNING: %d drops outside the bottleneck queue" % r["other_drops"])


if __name__ == "__main__":
    main()
