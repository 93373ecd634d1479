/* SPDX-License-Identifier: MIT */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <gdx/gdx_wire.h>

void gdx_handle_pack(struct gdx_handle *h, int family, const void *addr, uint16_t port_be,
		     uint32_t scope_id, uint64_t nonce, uint32_t nrails)
{
	memset(h, 0, sizeof(*h));
	h->magic = htole64(GDX_WIRE_MAGIC);
	h->version = htole32(GDX_WIRE_VERSION);
	h->family = htole16((uint16_t)family);
	h->port = port_be;
	memcpy(h->addr, addr, family == AF_INET6 ? 16 : 4);
	h->scope_id = htole32(scope_id);
	h->nrails = htole16((uint16_t)nrails);
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
	return 0;
}

void gdx_wire_hello_pack(struct gdx_wire_hello *h, uint64_t nonce, uint32_t nrails)
{
	h->nrails = htole32(nrails);
	h->reserved = 0;
	h->magic = htole64(GDX_WIRE_MAGIC);
	h->version = htole32(GDX_WIRE_VERSION);
	h->meta_len = htole32(sizeof(struct gdx_wire_meta));
	h->nonce = htole64(nonce);
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
		snprintf(why, why_len,
			 "peer's hello carries nonce 0x%016llx, this listener's is 0x%016llx "
			 "(a stale handle?)",
			 (unsigned long long)le64toh(h.nonce), (unsigned long long)nonce);
		return -EPROTO;
	}
	return 0;
}

static void gdx_wire_rail_swap(struct gdx_wire_rail *out, const struct gdx_wire_rail *in,
			       int to_wire)
{
	*out = *in;
	out->qpn = to_wire ? htole32(in->qpn) : le32toh(in->qpn);
	out->psn = to_wire ? htole32(in->psn) : le32toh(in->psn);
	out->lid = to_wire ? htole16(in->lid) : le16toh(in->lid);
	out->sizes_rkey = to_wire ? htole32(in->sizes_rkey) : le32toh(in->sizes_rkey);
}

static void gdx_wire_meta_swap(struct gdx_wire_meta *out, const struct gdx_wire_meta *in,
			       int to_wire)
{
	*out = *in;
	out->nrails = to_wire ? htole32(in->nrails) : le32toh(in->nrails);
	out->max_recvs = to_wire ? htole32(in->max_recvs) : le32toh(in->max_recvs);
	out->fifo_addr = to_wire ? htole64(in->fifo_addr) : le64toh(in->fifo_addr);
	out->fifo_rkey = to_wire ? htole32(in->fifo_rkey) : le32toh(in->fifo_rkey);
	out->sizes_addr = to_wire ? htole64(in->sizes_addr) : le64toh(in->sizes_addr);
	for (int i = 0; i < GDX_MAX_RAILS; i++)
		gdx_wire_rail_swap(&out->rails[i], &in->rails[i], to_wire);
}

void gdx_wire_meta_pack(struct gdx_wire_meta *out, const struct gdx_wire_meta *in)
{
	gdx_wire_meta_swap(out, in, 1);
}

int gdx_wire_meta_unpack(const void *buf, size_t len, struct gdx_wire_meta *out, char *why,
			 size_t why_len)
{
	struct gdx_wire_meta raw;

	if (len != sizeof(raw)) {
		snprintf(why, why_len, "metadata is %zu bytes, expected %zu", len, sizeof(raw));
		return -EPROTO;
	}
	memcpy(&raw, buf, sizeof(raw));
	gdx_wire_meta_swap(out, &raw, 0);
	out->dev_name[GDX_DEV_NAME_MAX - 1] = '\0';
	if (out->nrails < 1 || out->nrails > GDX_MAX_RAILS) {
		snprintf(why, why_len, "peer announces %u rails (1-%d allowed)", out->nrails,
			 GDX_MAX_RAILS);
		return -EPROTO;
	}
	if (out->max_recvs < 1 || out->max_recvs > NCCL_NET_MAX_REQUESTS) {
		snprintf(why, why_len, "peer announces max_recvs %u", out->max_recvs);
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
		if (r->qpn == 0 || r->qpn > 0xffffff) {
			snprintf(why, why_len, "peer rail %u has QP number 0x%x", i, r->qpn);
			return -EPROTO;
		}
	}
	return 0;
}
