/* ff_device_addr4 (RFC 8435 section 4.1) and universal addresses
 * (RFC 5665): known bytes from the RFC definitions, round trips, the
 * NFSv3 rules, damaged input. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "check.h"
#include "pando/ff_xdr.h"
#include "xdr_bytes.h"

/* An NFSv3 data server at 10.0.2.2 port 19979 (0x4e0b: "78.11"), 1 MiB
 * reads and writes, loosely coupled. */
static const uint8_t nfsv3_ds[] = {
	U32(1),                                               /* ffda_netaddrs<>: 1 */
	U32(3),       't', 'c', 'p', 0,                       /* na_r_netid "tcp" + 1 pad */
	U32(14),      '1', '0', '.', '0', '.', '2', '.', '2', /* na_r_addr "10.0.2.2.78.11" */
	'.',          '7', '8', '.', '1', '1', 0,   0,        /* + 2 pad */
	U32(1),                                               /* ffda_versions<>: 1 */
	U32(3),                                               /* ffdv_version */
	U32(0),                                               /* ffdv_minorversion */
	U32(1048576),                                         /* ffdv_rsize */
	U32(1048576),                                         /* ffdv_wsize */
	U32(0),                                               /* ffdv_tightly_coupled: FALSE */
};

static void nfsv3_addr(struct pando_netaddr *na, struct pando_ff_device_version *v,
		       struct pando_ff_device_addr *a)
{
	memset(na, 0, sizeof(*na));
	strcpy(na->netid, "tcp");
	strcpy(na->uaddr, "10.0.2.2.78.11");
	*v = (struct pando_ff_device_version){ 3, 0, 1 << 20, 1 << 20, false };
	*a = (struct pando_ff_device_addr){ 1, na, 1, v };
}

static void test_known_bytes(void)
{
	struct pando_netaddr na;
	struct pando_ff_device_version v;
	struct pando_ff_device_addr a, back;
	uint8_t buf[256];
	size_t len;

	nfsv3_addr(&na, &v, &a);
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(nfsv3_ds));
	CHECK_MEM(buf, nfsv3_ds, sizeof(nfsv3_ds));
	CHECK_EQ(pando_ff_device_addr_decode(nfsv3_ds, sizeof(nfsv3_ds), &back), 0);
	CHECK_EQ(back.netaddr_count, 1);
	CHECK(strcmp(back.netaddrs[0].netid, "tcp") == 0);
	CHECK(strcmp(back.netaddrs[0].uaddr, "10.0.2.2.78.11") == 0);
	CHECK_EQ(back.version_count, 1);
	CHECK_EQ(back.versions[0].version, 3);
	CHECK_EQ(back.versions[0].rsize, 1 << 20);
	CHECK_EQ(back.versions[0].wsize, 1 << 20);
	CHECK(!back.versions[0].tightly_coupled);
	pando_ff_device_addr_release(&back);
}

/* "If ffdv_version equals 3, then the server MUST set ffdv_minorversion
 * to 0 and ffdv_tightly_coupled to false." */
static void test_rfc_rules(void)
{
	struct pando_netaddr na[2];
	struct pando_ff_device_version v[2];
	struct pando_ff_device_addr a, back;
	uint8_t buf[256];
	size_t len;

	nfsv3_addr(&na[0], &v[0], &a);
	v[0].minorversion = 1;
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), -EINVAL);
	v[0].minorversion = 0;
	v[0].tightly_coupled = true;
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), -EINVAL);
	v[0].tightly_coupled = false;
	a.netaddr_count = 0;
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), -EINVAL);
	a.netaddr_count = 1;
	a.version_count = 0;
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), -EINVAL);
	/* two paths, and an NFSv4.1 tightly coupled version beside v3 */
	na[1] = na[0];
	strcpy(na[1].netid, "tcp6");
	strcpy(na[1].uaddr, "fd00::2.78.11");
	v[1] = (struct pando_ff_device_version){ 4, 1, 65536, 65536, true };
	a = (struct pando_ff_device_addr){ 2, na, 2, v };
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, sizeof(buf), &len), 0);
	CHECK_EQ(pando_ff_device_addr_decode(buf, len, &back), 0);
	CHECK(strcmp(back.netaddrs[1].uaddr, "fd00::2.78.11") == 0);
	CHECK(back.versions[1].tightly_coupled);
	CHECK_EQ(back.versions[1].minorversion, 1);
	pando_ff_device_addr_release(&back);
	CHECK_EQ(pando_ff_device_addr_encode(&a, buf, 10, &len), -ENOSPC);
}

static void test_damaged(void)
{
	struct pando_ff_device_addr a;
	uint8_t bad[sizeof(nfsv3_ds)];
	int wrong = 0;

	for (size_t n = 0; n < sizeof(nfsv3_ds); n++)
		wrong += pando_ff_device_addr_decode(nfsv3_ds, n, &a) != -EBADMSG;
	CHECK_EQ(wrong, 0);
#define MUTATE(at, value) \
	do { \
		memcpy(bad, nfsv3_ds, sizeof(nfsv3_ds)); \
		bad[at] = (value); \
		CHECK_EQ(pando_ff_device_addr_decode(bad, sizeof(bad), &a), -EBADMSG); \
		CHECK(a.netaddrs == NULL && a.versions == NULL); \
	} while (0)
	MUTATE(3, 0x09);                 /* 9 addresses in 60 bytes */
	MUTATE(7, 0x40);                 /* a netid of 64 bytes: over our bound */
	MUTATE(11, 0x01);                /* padding after "tcp" */
	MUTATE(sizeof(nfsv3_ds) - 1, 2); /* ffdv_tightly_coupled = 2: not a bool */
	MUTATE(35, 0x05);                /* 5 versions in 20 bytes */
#undef MUTATE
}

static void test_universal_addresses(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(19979) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(2049) };
	struct sockaddr_storage back;
	struct pando_netaddr na;
	static const char *const malformed[] = {
		"10.0.2.2.78",  "10.0.2.2.256.1", "10.0.2.2.a.1",     ".1.2", "10.0.2.2.78.",
		"10.0.2.2..11", "1.2.3.4.5.6.7",  "10.0.2.2.0078.11", "",     "78.11",
	};

	inet_pton(AF_INET, "10.0.2.2", &in.sin_addr);
	CHECK_EQ(pando_netaddr_from_sockaddr((struct sockaddr *)&in, &na), 0);
	CHECK(strcmp(na.netid, "tcp") == 0);
	CHECK(strcmp(na.uaddr, "10.0.2.2.78.11") == 0);
	CHECK_EQ(pando_netaddr_to_sockaddr(&na, &back), 0);
	CHECK_EQ(back.ss_family, AF_INET);
	CHECK_MEM(&((struct sockaddr_in *)&back)->sin_addr, &in.sin_addr, 4);
	CHECK_EQ(ntohs(((struct sockaddr_in *)&back)->sin_port), 19979);

	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	CHECK_EQ(pando_netaddr_from_sockaddr((struct sockaddr *)&in6, &na), 0);
	CHECK(strcmp(na.netid, "tcp6") == 0);
	CHECK(strcmp(na.uaddr, "::1.8.1") == 0); /* 2049 = 8 * 256 + 1 */
	CHECK_EQ(pando_netaddr_to_sockaddr(&na, &back), 0);
	CHECK_EQ(back.ss_family, AF_INET6);
	CHECK_MEM(&((struct sockaddr_in6 *)&back)->sin6_addr, &in6.sin6_addr, 16);
	CHECK_EQ(ntohs(((struct sockaddr_in6 *)&back)->sin6_port), 2049);

	in.sin_family = AF_UNIX;
	CHECK_EQ(pando_netaddr_from_sockaddr((struct sockaddr *)&in, &na), -EAFNOSUPPORT);
	strcpy(na.netid, "tcp");
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		strcpy(na.uaddr, malformed[i]);
		CHECK_EQ(pando_netaddr_to_sockaddr(&na, &back), -EINVAL);
	}
	strcpy(na.uaddr, "10.0.2.2.78.11");
	strcpy(na.netid, "udp");
	CHECK_EQ(pando_netaddr_to_sockaddr(&na, &back), -EINVAL);
}

int main(void)
{
	test_known_bytes();
	test_rfc_rules();
	test_damaged();
	test_universal_addresses();
	CHECK_DONE();
}
