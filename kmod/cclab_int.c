// SPDX-License-Identifier: GPL-2.0
/*
 * cclab_int.ko: collects the echoed INT records (tcopt/README.md) of the
 * cclab law modules' sockets from incoming ACKs, and defines the
 * cclab:cclab_cc_ack tracepoint. See cclab_int.h for the interface.
 *
 * Where: a netfilter NF_INET_LOCAL_IN hook in every network namespace. It
 * runs after early demux, which has put the established socket in skb->sk
 * (net.ipv4.tcp_early_demux, on by default), and before TCP's receive path
 * runs tcp_ack(), so the law sees the ACK's own echo. Only sockets a law
 * module attached are looked at; everything else costs one hash lookup.
 */
#include <linux/module.h>
#include <linux/hashtable.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/net_namespace.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "cclab_int.h"

#define CREATE_TRACE_POINTS
#include "trace_cclab.h"
EXPORT_TRACEPOINT_SYMBOL_GPL(cclab_cc_ack);

/* Sockets attached by law modules, keyed by the socket's address. */
static DEFINE_HASHTABLE(cclab_socks, 10);
static DEFINE_SPINLOCK(cclab_socks_lock);	/* writers; readers use RCU */

static atomic64_t stat_sockets = ATOMIC64_INIT(0);
static atomic64_t stat_echoes = ATOMIC64_INIT(0);
static atomic64_t stat_no_echo = ATOMIC64_INIT(0);

struct cclab_int_sock *cclab_int_attach(const struct sock *sk, size_t priv_size, gfp_t gfp)
{
	struct cclab_int_sock *is = kzalloc(sizeof(*is) + priv_size, gfp);

	if (!is)
		return NULL;
	is->sk = sk;
	spin_lock_init(&is->lock);
	spin_lock_bh(&cclab_socks_lock);
	hash_add_rcu(cclab_socks, &is->node, (unsigned long)sk);
	spin_unlock_bh(&cclab_socks_lock);
	atomic64_inc(&stat_sockets);
	return is;
}
EXPORT_SYMBOL_GPL(cclab_int_attach);

void cclab_int_detach(struct cclab_int_sock *is)
{
	if (!is)
		return;
	spin_lock_bh(&cclab_socks_lock);
	hash_del_rcu(&is->node);
	spin_unlock_bh(&cclab_socks_lock);
	atomic64_dec(&stat_sockets);
	kfree_rcu(is, rcu);
}
EXPORT_SYMBOL_GPL(cclab_int_detach);

bool cclab_int_read(struct cclab_int_sock *is, struct int_echo *out)
{
	bool any;

	spin_lock_bh(&is->lock);
	any = is->echo.count != 0;
	if (any)
		*out = is->echo;
	spin_unlock_bh(&is->lock);
	return any;
}
EXPORT_SYMBOL_GPL(cclab_int_read);

/*
 * Find our option in a TCP options area of len bytes and decode it into e.
 * Returns 0 when e holds an echo; -1 when there is none or it is malformed
 * (then the caller counts it and changes nothing). Every length is checked
 * against the area before a byte is read.
 */
static int cclab_int_parse(const u8 *opt, unsigned int len, struct int_echo *e,
			   struct int_qcn *qcn, bool *has_qcn)
{
	unsigned int i = 0, hops, h, n = 0;
	int slots;

	while (i < len) {
		u8 kind = opt[i], olen;

		if (kind == TCPOPT_EOL)
			return -1;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -1;
		olen = opt[i + 1];
		if (olen < 2 || i + olen > len)
			return -1;
		if (kind == INT_OPT_KIND && olen >= 4 &&
		    ((opt[i + 2] << 8) | opt[i + 3]) == INT_OPT_EXID)
			break;
		i += olen;
	}
	if (i >= len)
		return -1;
	opt += i;
	slots = int_opt_slots(opt[1]);
	if (slots < 0)
		return -1;
	if (int_hdr_hops(opt[4]) < 0)	/* an unknown version */
		return -1;
	hops = int_hdr_hops(opt[4]);
	if (!(opt[4] & INT_HDR_ECHO) || hops > (unsigned int)slots)
		return -1;
	for (h = 0; h < hops && h < INT_MAX_HOPS; h++) {
		const u8 *rec = opt + INT_OPT_BASE_LEN + h * INT_REC_LEN;

		if (int_rec_decode(rec, &e->hop[n]) == 0)
			n++;
		else if (!*has_qcn && int_qcn_decode(rec, qcn) == 0)
			*has_qcn = true;	/* a CP's feedback (int_echo.h) */
	}
	e->nhops = n;
	e->flags = int_echo_flags(opt[4]);
	return 0;
}

static struct cclab_int_sock *cclab_int_find(const struct sock *sk)
{
	struct cclab_int_sock *is;

	hash_for_each_possible_rcu(cclab_socks, is, node, (unsigned long)sk)
		if (is->sk == sk)
			return is;
	return NULL;
}

static unsigned int cclab_int_hook(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	u8 obuf[MAX_TCP_OPTION_SPACE];
	struct tcphdr _th;
	const struct tcphdr *th;
	const u8 *opt;
	struct cclab_int_sock *is;
	struct int_echo e = {};
	struct int_qcn qcn;
	bool has_qcn = false;
	unsigned int thoff, olen;
	const struct iphdr *iph = ip_hdr(skb);
	struct sock *sk = skb->sk;

	if (!sk || iph->protocol != IPPROTO_TCP || !sk_fullsock(sk) ||
	    sk->sk_protocol != IPPROTO_TCP)
		return NF_ACCEPT;
	/* Hook functions run under rcu_read_lock. */
	is = cclab_int_find(sk);
	if (!is)
		return NF_ACCEPT;
	if (iph->ihl < 5 || ip_is_fragment(iph))
		return NF_ACCEPT;
	thoff = skb_network_offset(skb) + iph->ihl * 4;
	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	if (!th || th->doff < 5)
		return NF_ACCEPT;
	olen = th->doff * 4 - sizeof(*th);
	if (olen < INT_OPT_BASE_LEN || olen > sizeof(obuf))
		return NF_ACCEPT;
	opt = skb_header_pointer(skb, thoff + sizeof(*th), olen, obuf);
	if (!opt)
		return NF_ACCEPT;
	if (cclab_int_parse(opt, olen, &e, &qcn, &has_qcn)) {
		atomic64_inc(&stat_no_echo);
		return NF_ACCEPT;
	}
	e.arrived_ns = ktime_get_ns();
	spin_lock(&is->lock);
	e.count = is->echo.count + 1;
	e.qcn_count = is->echo.qcn_count;
	e.qcn_key = is->echo.qcn_key;
	e.qcn_fb = is->echo.qcn_fb;
	if (has_qcn)
		int_echo_take_qcn(&e, &qcn);
	is->echo = e;
	spin_unlock(&is->lock);
	atomic64_inc(&stat_echoes);
	return NF_ACCEPT;
}

static const struct nf_hook_ops cclab_int_ops = {
	.hook = cclab_int_hook,
	.pf = NFPROTO_IPV4,
	.hooknum = NF_INET_LOCAL_IN,
	.priority = NF_IP_PRI_LAST,	/* after filtering: only ACKs TCP will see */
};

static int __net_init cclab_int_net_init(struct net *net)
{
	return nf_register_net_hook(net, &cclab_int_ops);
}

static void __net_exit cclab_int_net_exit(struct net *net)
{
	nf_unregister_net_hook(net, &cclab_int_ops);
}

static struct pernet_operations cclab_int_net_ops = {
	.init = cclab_int_net_init,
	.exit = cclab_int_net_exit,
};

/* Read-only counters: live sockets, echoes stored, segments without one. */
static int cclab_int_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read((atomic64_t *)kp->arg));
}

static const struct kernel_param_ops cclab_int_stat_ops = {
	.get = cclab_int_stat_get,
};
module_param_cb(sockets, &cclab_int_stat_ops, &stat_sockets, 0444);
MODULE_PARM_DESC(sockets, "law sockets attached now: 0 once all are closed (read only)");
module_param_cb(echoes, &cclab_int_stat_ops, &stat_echoes, 0444);
MODULE_PARM_DESC(echoes, "INT echoes stored for law sockets (read only)");
module_param_cb(no_echo, &cclab_int_stat_ops, &stat_no_echo, 0444);
MODULE_PARM_DESC(no_echo, "segments of law sockets without a valid INT echo (read only)");

static int __init cclab_int_init(void)
{
	return register_pernet_subsys(&cclab_int_net_ops);
}

static void __exit cclab_int_exit(void)
{
	unregister_pernet_subsys(&cclab_int_net_ops);
	/* Law modules depend on us: no socket can still be attached. */
	rcu_barrier();
}

module_init(cclab_int_init);
module_exit(cclab_int_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cclab: INT echoes of TCP ACKs for the cclab congestion-control modules");
