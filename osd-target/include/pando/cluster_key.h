/* The cluster key: a secret shared by the OSD targets and the metadata
 * managers.  It signs file handles (capabilities) and, through a key
 * derived per target, control-protocol calls.  During a rotation a key
 * file also holds the key it replaces, which verifiers still accept and
 * nobody signs with.  File format and the rotation in README.md. */
#ifndef PANDO_CLUSTER_KEY_H
#define PANDO_CLUSTER_KEY_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_KEY_SECRET_LEN 32
/* Room cluster_key_format needs, with a previous key. */
#define CLUSTER_KEY_TEXT_MAX 256

struct cluster_key {
	uint16_t id;
	uint8_t secret[CLUSTER_KEY_SECRET_LEN];
	uint16_t previous_id; /* 0: no rotation under way */
	uint8_t previous_secret[CLUSTER_KEY_SECRET_LEN];
};

/* 0, -ENOENT / -EACCES (cannot open), -EINVAL (malformed; *why says what). */
int cluster_key_load(const char *path, struct cluster_key *key, const char **why);
int cluster_key_parse(const char *text, struct cluster_key *key, const char **why);
/* The secret of key `id` if the file holds it (current or previous), else NULL. */
const uint8_t *cluster_key_secret(const struct cluster_key *key, uint32_t id);
/* Fresh random key, no previous one; 0 or -EIO when no randomness could be had. */
int cluster_key_generate(uint16_t id, struct cluster_key *key);
/* Writes the key file's text ("id = N\nsecret = HEX\n", then the previous
 * key's lines if any) into buf (CLUSTER_KEY_TEXT_MAX bytes suffice). */
void cluster_key_format(const struct cluster_key *key, char *buf, size_t cap);

#endif
