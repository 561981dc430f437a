/* HOST:PORT splitting: the forms daemons and tools accept, and the
 * malformed ones they must refuse with -EINVAL rather than guess at. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "hostport.h"

static int split(const char *spec, char *host, char *port)
{
	return pando_hostport_split(spec, host, 64, port, 6);
}

static void check_split(const char *spec, const char *want_host, const char *want_port)
{
	char host[64], port[6];

	CHECK_EQ(split(spec, host, port), 0);
	CHECK(strcmp(host, want_host) == 0);
	CHECK(strcmp(port, want_port) == 0);
}

static void test_names_and_ipv4_addresses_split_at_the_colon(void)
{
	check_split("127.0.0.1:2049", "127.0.0.1", "2049");
	check_split("osd-3.example:7000", "osd-3.example", "7000");
	check_split("h:65535", "h", "65535");
}

static void test_port_zero_is_accepted_for_listeners(void)
{
	check_split("0.0.0.0:0", "0.0.0.0", "0");
}

static void test_ipv6_bracketed_or_bare_splits_at_the_last_colon(void)
{
	check_split("[::1]:2049", "::1", "2049");
	check_split("[fe80::1%lo]:9", "fe80::1%lo", "9");
	check_split("::1:2049", "::1", "2049");
}

static void test_a_missing_host_or_port_is_refused(void)
{
	char host[64], port[6];

	CHECK_EQ(split("127.0.0.1", host, port), -EINVAL);
	CHECK_EQ(split("127.0.0.1:", host, port), -EINVAL);
	CHECK_EQ(split(":2049", host, port), -EINVAL);
	CHECK_EQ(split("[]:2049", host, port), -EINVAL);
	CHECK_EQ(split("", host, port), -EINVAL);
}

static void test_ports_beyond_16_bits_are_refused_not_wrapped(void)
{
	char host[64], port[6];

	CHECK_EQ(split("h:65536", host, port), -EINVAL);
	CHECK_EQ(split("h:70000", host, port), -EINVAL);
	CHECK_EQ(split("h:99999999999", host, port), -EINVAL);
}

static void test_junk_ports_are_refused(void)
{
	char host[64], port[6];

	CHECK_EQ(split("h:80x", host, port), -EINVAL);
	CHECK_EQ(split("h:+80", host, port), -EINVAL);
	CHECK_EQ(split("h: 80", host, port), -EINVAL);
	CHECK_EQ(split("h:-1", host, port), -EINVAL);
	CHECK_EQ(split("h:nfs", host, port), -EINVAL);
	CHECK_EQ(split("[::1]2049", host, port), -EINVAL);
}

static void test_parts_longer_than_their_buffers_are_refused(void)
{
	char host[4], port[3];

	CHECK_EQ(pando_hostport_split("abcd:1", host, sizeof(host), port, sizeof(port)), -EINVAL);
	CHECK_EQ(pando_hostport_split("abc:123", host, sizeof(host), port, sizeof(port)), -EINVAL);
	CHECK_EQ(pando_hostport_split("abc:12", host, sizeof(host), port, sizeof(port)), 0);
}

/* What cluster.conf, the cluster map and an OSD's advertise= accept: an
 * address a peer can reach, so port 0 is refused there. */
static void test_an_address_has_a_host_and_a_port_from_1_to_65535(void)
{
	CHECK(pando_hostport_is_address("127.0.0.1:2049"));
	CHECK(pando_hostport_is_address("[::1]:1"));
	CHECK(pando_hostport_is_address("::1:65535"));
	CHECK(!pando_hostport_is_address("127.0.0.1:0"));
	CHECK(!pando_hostport_is_address("127.0.0.1:00"));
	CHECK(!pando_hostport_is_address("127.0.0.1:65536"));
	CHECK(!pando_hostport_is_address("127.0.0.1:+80"));
	CHECK(!pando_hostport_is_address(":2049"));
	CHECK(!pando_hostport_is_address("[]:2049"));
	CHECK(!pando_hostport_is_address("127.0.0.1"));
	CHECK(!pando_hostport_is_address(""));
}

int main(void)
{
	test_names_and_ipv4_addresses_split_at_the_colon();
	test_port_zero_is_accepted_for_listeners();
	test_ipv6_bracketed_or_bare_splits_at_the_last_colon();
	test_a_missing_host_or_port_is_refused();
	test_ports_beyond_16_bits_are_refused_not_wrapped();
	test_junk_ports_are_refused();
	test_parts_longer_than_their_buffers_are_refused();
	test_an_address_has_a_host_and_a_port_from_1_to_65535();
	CHECK_DONE();
}
