/* SPDX-License-Identifier: MIT */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "sys/gdx_log.h"
#include "wire/gdx_wire.h"

void gdx_handle_pack(struct gdx_handle *h, int family, const void *addr, uint16_t port_be,
		     uint32_t scope_id, uint64_t nonce, uint32_t nrails, uint32_t qps)
{
	memset(h, 0, sizeof(*h));
	h->magic = htole64(GDX_WIRE_MAGIC);
	h->version = htole32(GDX_WIRE_VERSION);
	h->family = htole16((uint16_t)family);
	h->port = port_be;
	memcpy(h->addr, addr, family == AF_INET6 ? 16 : 4);
	h->scope_id = htole32(scope_id);
	h->nrails = htole16((uint16_t)nrails);
	h->qps = htole16((uint16_t)qps);
	h->nonce = htole64(nonce);
}

int gdx_handle_check(const struct gdx_handle *h, char *why, size_t why_len)
{
	uint64_t magic = le64toh(h->magic);
	uint32_t version = le32toh(h->version);
	uint16_t family = le16toh(h->family);

	if (magic != GDX_WIRE_MAGIC || version != GDX_WIRE_VERSION) {
		snprintf(why, why_len,
			 "listen handle has magic 0x%016llx version %u, this plugin speaks "
			 "magic 0x%016llx version %u (is the peer running another build of the "
			 "plugin, or another plugin?)",
			 (unsigned long long)magic, version, (unsigned long long)GDX_WIRE_MAGIC,
			 GDX_WIRE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if ((family != AF_INET && family != AF_INET6) || h->port == 0) {
		snprintf(why, why_len, "listen handle has address family %u port %u", family,
			 be16toh(h->port));
		return -EINVAL;
	}
	if (le16toh(h->nrails) < 1 || le16toh(h->nrails) > GDX_MAX_RAILS) {
		snprintf(why, why_len, "listen handle announces %u rails (1-%d allowed)",
			 le16toh(h->nrails), GDX_MAX_RAILS);
		return -EINVAL;
	}
	if (le16toh(h->qps) < 1 || le16toh(h->qps) > GDX_MAX_QPS) {
		snprintf(why, why_len, "listen handle asks for %u QPs per rail (1-%d allowed)",
			 le16toh(h->qps), GDX_MAX_QPS);
		return -EINVAL;
	}
	return 0;
}

void gdx_wire_hello_pack(struct gdx_wire_hello *h, uint64_t nonce, uint32_t nrails)
{
	h->nrails = htole32(nrails);
	h->refused = 0;
	h->magic = htole64(GDX_WIRE_MAGIC);
	h->version = htole32(GDX_WIRE_VERSION);
	h->meta_len = htole32(sizeof(struct gdx_wire_meta));
	h->nonce = htole64(nonce);
}

void gdx_wire_refusal_pack(struct gdx_wire_hello *h, uint32_t why)
{
	gdx_wire_hello_pack(h, 0, 1);
	h->refused = htole32(why);
}

const char *gdx_wire_refusal_str(uint32_t why)
{
	switch (why) {
	case GDX_REFUSED_VERSION: return "it speaks another magic or protocol version";
	case GDX_REFUSED_HELLO: return "our hello was malformed";
	case GDX_REFUSED_NONCE:
		return "our hello does not carry the nonce of its handle (a stale handle?)";
	case GDX_REFUSED_META: return "our metadata was malformed";
	case GDX_REFUSED_RAILS: return "the rail and QP counts of the two ends do not agree";
	case GDX_REFUSED_LOCAL: return "it could not make its end of the connection (see its log)";
	case GDX_REFUSED_BUSY:
		return "it closed the connection unread, the oldest of too many that had sent no "
		       "hello";
	case GDX_REFUSED_SILENT:
		return "it closed the connection unread: no hello came within its hello deadline";
	default: return "a reason this plugin does not know";
	}
}

uint32_t gdx_wire_hello_rails(const struct gdx_wire_hello *h)
{
	return le32toh(h->nrails);
}

int gdx_wire_hello_check(const void *buf, size_t len, uint64_t nonce, char *why, size_t why_len)
{
	struct gdx_wire_hello h;
	uint64_t magic;
	uint32_t version, meta_len;

	if (len != sizeof(h)) {
		snprintf(why, why_len, "hello is %zu bytes, expected %zu", len, sizeof(h));
		return -EPROTO;
	}
	memcpy(&h, buf, sizeof(h));
	magic = le64toh(h.magic);
	version = le32toh(h.version);
	meta_len = le32toh(h.meta_len);
	if (magic != GDX_WIRE_MAGIC || version != GDX_WIRE_VERSION) {
		snprintf(why, why_len,
			 "peer speaks magic 0x%016llx version %u, this plugin magic 0x%016llx "
			 "version %u",
			 (unsigned long long)magic, version, (unsigned long long)GDX_WIRE_MAGIC,
			 GDX_WIRE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h.refused) {
		snprintf(why, why_len, "hello is a refusal: %s",
			 gdx_wire_refusal_str(le32toh(h.refused)));
		return -ECONNREFUSED;
	}
	if (meta_len != sizeof(struct gdx_wire_meta)) {
		snprintf(why, why_len, "peer announces %u bytes of metadata, expected %zu",
			 meta_len, sizeof(struct gdx_wire_meta));
		return -EPROTO;
	}
	if (le32toh(h.nrails) < 1 || le32toh(h.nrails) > GDX_MAX_RAILS) {
		snprintf(why, why_len, "peer's hello announces %u rails (1-%d allowed)",
			 le32toh(h.nrails), GDX_MAX_RAILS);
		return -EPROTO;
	}
	if (le64toh(h.nonce) != nonce) {
		/* neither value: the nonce is what proves a peer has the handle */
		snprintf(why, why_len,
			 "hello does not carry the nonce of the listener's handle (a stale "
			 "handle, or a client that never had it)");
		return -EACCES;
	}
	return 0;
}

#define GDX_SWAP32(x) ((x) = to_wire ? htole32(x) : le32toh(x))

static void gdx_wire_rail_swap(struct gdx_wire_rail *r, int to_wire)
{
	GDX_SWAP32(r->psn);
	r->lid = to_wire ? htole16(r->lid) : le16toh(r->lid);
	GDX_SWAP32(r->ctrl_rkey);
	GDX_SWAP32(r->ece.vendor_id);
	GDX_SWAP32(r->ece.options);
	GDX_SWAP32(r->ece.comp_mask);
	GDX_SWAP32(r->ece.supported);
}

static void gdx_wire_meta_swap(struct gdx_wire_meta *out, const struct gdx_wire_meta *in,
			       int to_wire)
{
	*out = *in;
	GDX_SWAP32(out->nrails);
	GDX_SWAP32(out->qps_per_rail);
	GDX_SWAP32(out->max_recvs);
	out->flags = to_wire ? htole16(in->flags) : le16toh(in->flags);
	out->ctrl_addr = to_wire ? htole64(in->ctrl_addr) : le64toh(in->ctrl_addr);
	for (int i = 0; i < GDX_MAX_RAILS; i++)
		gdx_wire_rail_swap(&out->rails[i], to_wire);
	for (int i = 0; i < GDX_MAX_QPS; i++)
		GDX_SWAP32(out->qpn[i]);
}

void gdx_wire_meta_pack(struct gdx_wire_meta *out, const struct gdx_wire_meta *in)
{
	gdx_wire_meta_swap(out, in, 1);
}

int gdx_wire_meta_unpack(const void *buf, size_t len, struct gdx_wire_meta *out, char *why,
			 size_t why_len)
{
	struct gdx_wire_meta raw;
	char name[GDX_DEV_NAME_MAX];

	if (len != sizeof(raw)) {
		snprintf(why, why_len, "metadata is %zu bytes, expected %zu", len, sizeof(raw));
		return -EPROTO;
	}
	memcpy(&raw, buf, sizeof(raw));
	gdx_wire_meta_swap(out, &raw, 0);
	/* the peer's words: printable before any log line or counter sees them */
	memcpy(name, out->dev_name, sizeof(name));
	gdx_log_sanitize(out->dev_name, sizeof(out->dev_name), name, sizeof(name));
	if (out->nrails < 1 || out->nrails > GDX_MAX_RAILS) {
		snprintf(why, why_len, "peer announces %u rails (1-%d allowed)", out->nrails,
			 GDX_MAX_RAILS);
		return -EPROTO;
	}
	if (out->max_recvs < 1 || out->max_recvs > NCCL_NET_MAX_REQUESTS) {
		snprintf(why, why_len, "peer announces max_recvs %u", out->max_recvs);
		return -EPROTO;
	}
	if (out->qps_per_rail < 1 || out->qps_per_rail > GDX_MAX_QPS ||
	    out->nrails * out->qps_per_rail > GDX_MAX_QPS) {
		snprintf(why, why_len,
			 "peer announces %u QPs on each of %u rails (%d in all allowed)",
			 out->qps_per_rail, out->nrails, GDX_MAX_QPS);
		return -EPROTO;
	}
	for (uint32_t i = 0; i < out->nrails; i++) {
		const struct gdx_wire_rail *r = &out->rails[i];

		if (r->link_layer != 1 && r->link_layer != 2) {
			snprintf(why, why_len, "peer rail %u has link layer %u", i, r->link_layer);
			return -EPROTO;
		}
		if (r->mtu < 1 || r->mtu > 5) {
			snprintf(why, why_len, "peer rail %u has path MTU code %u", i, r->mtu);
			return -EPROTO;
		}
		if (r->ece.supported > 1) {
			snprintf(why, why_len, "peer rail %u has ECE flag %u", i, r->ece.supported);
			return -EPROTO;
		}
	}
	for (uint32_t i = 0; i < out->nrails * out->qps_per_rail; i++) {
		if (out->qpn[i] == 0 || out->qpn[i] > 0xffffff) {
			snprintf(why, why_len, "peer QP %u of rail %u has QP number 0x%x",
				 i % out->qps_per_rail, i / out->qps_per_rail, out->qpn[i]);
			return -EPROTO;
		}
	}
	return 0;
}
