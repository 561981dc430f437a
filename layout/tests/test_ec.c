/* Reed-Solomon codec: parity against an independent GF(2^8) reference,
 * decode over every erasure pattern up to m, partial-stripe updates, and
 * jerasure / ISA-L bit-identity where ISA-L is built in. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "pando/ec.h"

#define MAX_CHUNKS (PANDO_EC_MAX_K + PANDO_EC_MAX_M)

static const unsigned shapes[][2] = { { 4, 2 }, { 8, 2 }, { 10, 4 }, { 3, 3 }, { 6, 3 }, { 1, 1 } };
static const size_t lengths[] = { 1, 7, 8, 63, 64, 100, 4096, 65536 + 13 };

static uint64_t rng_state = 42;

static uint8_t rand_byte(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint8_t)(rng_state >> 56);
}

/* GF(2^8) multiply modulo x^8+x^4+x^3+x^2+1, bit by bit: written here
 * from the definition, sharing nothing with either library. */
static uint8_t gf_mul_ref(uint8_t a, uint8_t b)
{
	uint8_t p = 0;

	while (b) {
		if (b & 1)
			p ^= a;
		a = (uint8_t)((a << 1) ^ (a & 0x80 ? 0x1d : 0));
		b >>= 1;
	}
	return p;
}

static void encode_ref(const uint8_t *matrix, unsigned k, unsigned m, uint8_t **chunks, size_t len)
{
	for (unsigned i = 0; i < m; i++) {
		for (size_t b = 0; b < len; b++) {
			uint8_t v = 0;

			for (unsigned j = 0; j < k; j++)
				v ^= gf_mul_ref(matrix[i * k + j], chunks[j][b]);
			chunks[k + i][b] = v;
		}
	}
}

struct stripe {
	unsigned n;
	size_t len;
	uint8_t *chunk[MAX_CHUNKS];
	uint8_t *base[MAX_CHUNKS];
};

/* skew: start chunk i i*5 mod 16 bytes into its allocation, so the
 * buffers are not aligned alike (gf-complete needs them alike). */
static void stripe_alloc(struct stripe *s, unsigned n, size_t len, int skew)
{
	s->n = n;
	s->len = len;
	for (unsigned i = 0; i < n; i++) {
		s->base[i] = malloc(len + 16);
		s->chunk[i] = s->base[i] + (skew ? i * 5 % 16 : 0);
	}
}

static void stripe_free(struct stripe *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->base[i]);
}

static void stripe_random(struct stripe *s, unsigned k)
{
	for (unsigned i = 0; i < k; i++)
		for (size_t b = 0; b < s->len; b++)
			s->chunk[i][b] = rand_byte();
}

static void stripe_copy(struct stripe *dst, const struct stripe *src)
{
	for (unsigned i = 0; i < src->n; i++)
		memcpy(dst->chunk[i], src->chunk[i], src->len);
}

static int stripe_equal(const struct stripe *a, const struct stripe *b)
{
	for (unsigned i = 0; i < a->n; i++)
		if (memcmp(a->chunk[i], b->chunk[i], a->len))
			return 0;
	return 1;
}

static void test_matrix(void)
{
	struct pando_ec *ec;

	CHECK_EQ(pando_ec_new(10, 4, PANDO_EC_JERASURE, &ec), 0);
	/* jerasure's Vandermonde coding matrix is normalised to a first row
	 * and a first column of ones (RAID-5's XOR is its parity 0) */
	for (unsigned j = 0; j < 10; j++)
		CHECK_EQ(pando_ec_matrix(ec)[j], 1);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(pando_ec_matrix(ec)[i * 10], 1);
	pando_ec_free(ec);
}

static void check_encode(enum pando_ec_backend backend, unsigned k, unsigned m, size_t len,
			 int skew)
{
	struct stripe got, want;
	struct pando_ec *ec;

	CHECK_EQ(pando_ec_new(k, m, backend, &ec), 0);
	stripe_alloc(&got, k + m, len, skew);
	stripe_alloc(&want, k + m, len, 0);
	stripe_random(&want, k);
	encode_ref(pando_ec_matrix(ec), k, m, want.chunk, len);
	stripe_copy(&got, &want);
	for (unsigned i = k; i < k + m; i++)
		memset(got.chunk[i], 0xee, len);
	CHECK_EQ(pando_ec_encode(ec, (const uint8_t *const *)got.chunk, got.chunk + k, len), 0);
	CHECK(stripe_equal(&got, &want));
	stripe_free(&got);
	stripe_free(&want);
	pando_ec_free(ec);
}

static void test_encode(enum pando_ec_backend backend)
{
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
			for (int skew = 0; skew < 2; skew++)
				check_encode(backend, shapes[s][0], shapes[s][1], lengths[l], skew);
}

/* Next subset of {0..n-1} of size r in lexicographic order; 0 at the end. */
static int next_subset(unsigned *idx, unsigned r, unsigned n)
{
	int i = (int)r - 1;

	while (i >= 0 && idx[i] == n - r + (unsigned)i)
		i--;
	if (i < 0)
		return 0;
	idx[i]++;
	for (unsigned j = (unsigned)i + 1; j < r; j++)
		idx[j] = idx[j - 1] + 1;
	return 1;
}

/* Erases every pattern of 1..m chunks and decodes; returns patterns tried. */
static unsigned check_decode_all(enum pando_ec_backend backend, unsigned k, unsigned m, size_t len,
				 int skew)
{
	struct stripe orig, work;
	struct pando_ec *ec;
	unsigned tried = 0, bad = 0;

	CHECK_EQ(pando_ec_new(k, m, backend, &ec), 0);
	stripe_alloc(&orig, k + m, len, 0);
	stripe_alloc(&work, k + m, len, skew);
	stripe_random(&orig, k);
	encode_ref(pando_ec_matrix(ec), k, m, orig.chunk, len);
	for (unsigned r = 1; r <= m; r++) {
		unsigned idx[PANDO_EC_MAX_M];

		for (unsigned i = 0; i < r; i++)
			idx[i] = i;
		do {
			stripe_copy(&work, &orig);
			for (unsigned i = 0; i < r; i++)
				memset(work.chunk[idx[i]], 0x5a, len);
			if (pando_ec_decode(ec, work.chunk, idx, r, len) ||
			    !stripe_equal(&work, &orig))
				bad++;
			tried++;
		} while (next_subset(idx, r, k + m));
	}
	CHECK_EQ(bad, 0);
	stripe_free(&orig);
	stripe_free(&work);
	pando_ec_free(ec);
	return tried;
}

static void test_decode(enum pando_ec_backend backend)
{
	/* C(14,1)+C(14,2)+C(14,3)+C(14,4) patterns for RS(10,4) */
	CHECK_EQ(check_decode_all(backend, 10, 4, 1000, 0), 14 + 91 + 364 + 1001);
	CHECK_EQ(check_decode_all(backend, 8, 2, 333, 1), 10 + 45);
	CHECK_EQ(check_decode_all(backend, 4, 2, 4096, 0), 6 + 15);
	CHECK_EQ(check_decode_all(backend, 6, 3, 65, 1), 9 + 36 + 84);
}

/* Random partial writes into one data chunk, parity patched by update,
 * must equal a full re-encode. */
static void test_update(enum pando_ec_backend backend)
{
	const unsigned k = 8, m = 3;
	const size_t len = 9000;
	struct stripe s, full;
	struct pando_ec *ec;
	uint8_t delta[9000];

	CHECK_EQ(pando_ec_new(k, m, backend, &ec), 0);
	stripe_alloc(&s, k + m, len, 0);
	stripe_alloc(&full, k + m, len, 0);
	stripe_random(&s, k);
	encode_ref(pando_ec_matrix(ec), k, m, s.chunk, len);
	for (int round = 0; round < 200; round++) {
		unsigned j = rand_byte() % k;
		size_t off = (size_t)(rand_byte() << 8 | rand_byte()) % len;
		size_t n = 1 + (size_t)(rand_byte() << 8 | rand_byte()) % (len - off);
		uint8_t *parity[PANDO_EC_MAX_M];

		for (size_t b = 0; b < n; b++) {
			uint8_t new = rand_byte();

			delta[b] = s.chunk[j][off + b] ^ new;
			s.chunk[j][off + b] = new;
		}
		for (unsigned i = 0; i < m; i++)
			parity[i] = s.chunk[k + i] + off;
		CHECK_EQ(pando_ec_update(ec, j, delta, parity, n), 0);
	}
	stripe_copy(&full, &s);
	encode_ref(pando_ec_matrix(ec), k, m, full.chunk, len);
	CHECK(stripe_equal(&s, &full));
	stripe_free(&s);
	stripe_free(&full);
	pando_ec_free(ec);
}

/* The two backends on the same random stripes: parity, decoded chunks
 * and updated parity all byte-identical. */
static void test_bit_identity(void)
{
	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++) {
		unsigned k = shapes[sh][0], m = shapes[sh][1];
		struct pando_ec *jer, *isal;
		struct stripe a, b;
		unsigned erased[2] = { 0, k + m - 1 };
		unsigned n_erased = m >= 2 && k + m > 2 ? 2 : 1;
		uint8_t *pa[PANDO_EC_MAX_M], *pb[PANDO_EC_MAX_M];
		uint8_t delta[777];

		CHECK_EQ(pando_ec_new(k, m, PANDO_EC_JERASURE, &jer), 0);
		CHECK_EQ(pando_ec_new(k, m, PANDO_EC_ISAL, &isal), 0);
		CHECK_MEM(pando_ec_matrix(jer), pando_ec_matrix(isal), k * m);
		stripe_alloc(&a, k + m, 777 * 3, 0);
		stripe_alloc(&b, k + m, 777 * 3, 1);
		stripe_random(&a, k);
		stripe_copy(&b, &a);
		CHECK_EQ(pando_ec_encode(jer, (const uint8_t *const *)a.chunk, a.chunk + k, a.len),
			 0);
		CHECK_EQ(pando_ec_encode(isal, (const uint8_t *const *)b.chunk, b.chunk + k, b.len),
			 0);
		CHECK(stripe_equal(&a, &b));
		for (size_t i = 0; i < sizeof(delta); i++)
			delta[i] = rand_byte();
		for (unsigned i = 0; i < m; i++) {
			pa[i] = a.chunk[k + i] + 777;
			pb[i] = b.chunk[k + i] + 777;
		}
		CHECK_EQ(pando_ec_update(jer, k - 1, delta, pa, sizeof(delta)), 0);
		CHECK_EQ(pando_ec_update(isal, k - 1, delta, pb, sizeof(delta)), 0);
		CHECK(stripe_equal(&a, &b));
		memset(a.chunk[erased[0]], 0, a.len);
		memset(b.chunk[erased[n_erased - 1]], 0, b.len);
		CHECK_EQ(pando_ec_decode(jer, a.chunk, erased, n_erased, a.len), 0);
		CHECK_EQ(pando_ec_decode(isal, b.chunk, erased, n_erased, b.len), 0);
		CHECK(stripe_equal(&a, &b));
		stripe_free(&a);
		stripe_free(&b);
		pando_ec_free(jer);
		pando_ec_free(isal);
	}
}

static void test_bad_arguments(void)
{
	struct pando_ec *ec;
	uint8_t buf[4][8] = { { 0 } };
	uint8_t *chunks[4] = { buf[0], buf[1], buf[2], buf[3] };
	unsigned too_many[3] = { 0, 1, 2 }, repeated[2] = { 1, 1 }, out_of_range[1] = { 4 };

	CHECK_EQ(pando_ec_new(0, 2, PANDO_EC_AUTO, &ec), -EINVAL);
	CHECK(ec == NULL);
	CHECK_EQ(pando_ec_new(4, 0, PANDO_EC_AUTO, &ec), -EINVAL);
	CHECK_EQ(pando_ec_new(PANDO_EC_MAX_K + 1, 2, PANDO_EC_AUTO, &ec), -EINVAL);
	CHECK_EQ(pando_ec_new(4, PANDO_EC_MAX_M + 1, PANDO_EC_AUTO, &ec), -EINVAL);
	CHECK_EQ(pando_ec_new(2, 2, PANDO_EC_AUTO, &ec), 0);
	CHECK_EQ(pando_ec_decode(ec, chunks, too_many, 3, 8), -EINVAL);
	CHECK_EQ(pando_ec_decode(ec, chunks, repeated, 2, 8), -EINVAL);
	CHECK_EQ(pando_ec_decode(ec, chunks, out_of_range, 1, 8), -EINVAL);
	CHECK_EQ(pando_ec_decode(ec, chunks, too_many, 0, 8), 0);
	CHECK_EQ(pando_ec_update(ec, 2, buf[0], chunks + 2, 8), -EINVAL);
	CHECK_EQ(pando_ec_encode(ec, (const uint8_t *const *)chunks, chunks + 2, (1u << 30) + 1),
		 -EINVAL);
	pando_ec_free(ec);
}

int main(void)
{
	test_matrix();
	test_encode(PANDO_EC_JERASURE);
	test_decode(PANDO_EC_JERASURE);
	test_update(PANDO_EC_JERASURE);
	test_bad_arguments();
	if (pando_ec_backend_available(PANDO_EC_ISAL)) {
		test_encode(PANDO_EC_ISAL);
		test_decode(PANDO_EC_ISAL);
		test_update(PANDO_EC_ISAL);
		test_bit_identity();
		printf("ISA-L built in: jerasure/ISA-L bit-identity checked\n");
	} else {
		struct pando_ec *ec;

		CHECK_EQ(pando_ec_new(4, 2, PANDO_EC_ISAL, &ec), -ENOTSUP);
		printf("ISA-L not built in: bit-identity checks skipped\n");
	}
	CHECK_DONE();
}
