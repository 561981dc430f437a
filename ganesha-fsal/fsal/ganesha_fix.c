/* Compensation for a Ganesha 4.3 bug: a LAYOUTGET that carries a layout
 * stateid (any LAYOUTGET on a file whose layout the client already holds)
 * drops the layout state's reference twice (acquire_layout_state() and the
 * end of nfs4_op_layoutget()), and the next request on that state aborts
 * the server.  shared/notes/ganesha-4.3.md has the details.
 *
 * Ganesha calls the FSAL's layoutget exactly once between the two drops,
 * while the state's `granting` count is raised.  A state that existed
 * before this LAYOUTGET has a non-zero seqid (a new one gets its first
 * seqid only after the grant), so that is the case to compensate: take one
 * extra reference on it.  The state hangs off MDCACHE's entry for the
 * file, not off our handle, so the entry is found through MDCACHE's
 * create_handle with our handle's key. */
#include "pando_fsal.h"

#include "abstract_atomic.h"
#include "sal_data.h"

static struct fsal_obj_handle *mdcache_entry(struct pando_handle *h)
{
	struct fsal_export *super = h->exp->export.super_export;
	struct fsal_export *saved = op_ctx->fsal_export;
	struct gsh_buffdesc key = { .addr = h->key, .len = PANDO_FH_LEN };
	struct fsal_obj_handle *entry = NULL;
	fsal_status_t st;

	if (!super)
		return NULL;
	op_ctx->fsal_export = super;
	st = super->exp_ops.create_handle(super, &key, &entry, NULL);
	op_ctx->fsal_export = saved;
	return FSAL_IS_ERROR(st) ? NULL : entry;
}

static bool granting_existing_state(const struct state_t *s, clientid4 client)
{
	return s->state_type == STATE_TYPE_LAYOUT && s->state_data.layout.granting > 0 &&
	       s->state_seqid > 0 && s->state_owner &&
	       s->state_owner->so_owner.so_nfs4_owner.so_clientid == client;
}

bool pando_fix_layout_state_ref(struct pando_handle *h)
{
	struct fsal_obj_handle *entry;
	struct glist_head *node;
	bool fixed = false;

	if (!op_ctx->clientid)
		return false;
	entry = mdcache_entry(h);
	if (!entry)
		return false;
	if (entry->state_hdl) {
		PTHREAD_MUTEX_lock(&entry->state_hdl->st_lock);
		glist_for_each(node, &entry->state_hdl->file.list_of_states) {
			struct state_t *s = glist_entry(node, struct state_t, state_list);

			if (granting_existing_state(s, *op_ctx->clientid)) {
				atomic_inc_int32_t(&s->state_refcount);
				fixed = true;
				break;
			}
		}
		PTHREAD_MUTEX_unlock(&entry->state_hdl->st_lock);
	}
	entry->obj_ops->put_ref(entry);
	if (fixed)
		LogDebug(COMPONENT_PNFS,
			 "pando: LAYOUTGET on a held layout: compensated Ganesha 4.3's double unref");
	return fixed;
}
