#include "input-seq.h"

void slim_input_seq_reset(struct slim_input_seq *seq, uint32_t next)
{
	seq->next = next;
	seq->n_held = 0;
}

uint32_t slim_input_seq_next(const struct slim_input_seq *seq)
{
	return seq->next;
}

size_t slim_input_seq_held_count(const struct slim_input_seq *seq)
{
	return seq->n_held;
}

static int find(const struct slim_input_seq *seq, uint8_t kind, uint16_t code)
{
	for (size_t i = 0; i < seq->n_held; i++) {
		if (seq->held[i].kind == kind && seq->held[i].code == code) {
			return (int)i;
		}
	}
	return -1;
}

static void forget(struct slim_input_seq *seq, size_t i)
{
	seq->held[i] = seq->held[--seq->n_held];
}

/* Whether an event may reach the session, with the held set updated for it. */
static bool admit(struct slim_input_seq *seq, const struct slim_wire_input *ev)
{
	if (ev->kind != SLIM_INPUT_KEY && ev->kind != SLIM_INPUT_BUTTON) {
		return true;
	}
	int i = find(seq, ev->kind, ev->code);
	if (ev->value == 0) {
		/* a release of what is not held: it was released already, or never pressed */
		if (i < 0) {
			return false;
		}
		forget(seq, (size_t)i);
		return true;
	}
	/* as the compositor reads them: a button is down at any other value, a key at 1 */
	bool press = ev->kind == SLIM_INPUT_BUTTON || ev->value == 1;
	if (!press || i >= 0) {
		/* a repeat, or a press of what is held: nothing new to release later */
		return true;
	}
	if (seq->n_held == SLIM_HELD_MAX) {
		return false;
	}
	seq->held[seq->n_held++] = (struct slim_input_held_key){ ev->kind, ev->code };
	return true;
}

size_t slim_input_seq_input(struct slim_input_seq *seq, const struct slim_cmd *cmd,
		slim_input_apply_fn apply, void *data)
{
	size_t applied = 0;
	for (size_t i = 0; i < cmd->input.count; i++) {
		int32_t ahead = (int32_t)(cmd->input.first + (uint32_t)i - seq->next);
		if (ahead < 0) {
			continue; /* applied before */
		}
		if (ahead > 0) {
			break; /* a gap: what is missing comes again, and this with it */
		}
		struct slim_wire_input ev;
		slim_input_get(cmd, i, &ev);
		seq->next++;
		if (admit(seq, &ev)) {
			apply(data, &ev);
		}
		applied++;
	}
	return applied;
}

static void release(struct slim_input_seq *seq, size_t i, slim_input_apply_fn apply, void *data)
{
	struct slim_wire_input ev = {
		.kind = seq->held[i].kind,
		.code = seq->held[i].code,
		.value = 0,
	};
	forget(seq, i);
	apply(data, &ev);
}

size_t slim_input_seq_held(struct slim_input_seq *seq, const struct slim_cmd *cmd,
		slim_input_apply_fn apply, void *data)
{
	/* only a console that has been heard out speaks for what it holds now */
	if (cmd->held.next != seq->next) {
		return 0;
	}
	size_t released = 0;
	for (size_t i = 0; i < seq->n_held;) {
		bool still = false;
		for (size_t k = 0; k < cmd->held.count && !still; k++) {
			still = slim_held_get(cmd, k) == seq->held[i].code;
		}
		if (still) {
			i++;
		} else {
			/* the last one moves into slot i: look at it next */
			release(seq, i, apply, data);
			released++;
		}
	}
	return released;
}

size_t slim_input_seq_release_all(struct slim_input_seq *seq, slim_input_apply_fn apply,
		void *data)
{
	size_t released = seq->n_held;
	while (seq->n_held > 0) {
		release(seq, seq->n_held - 1, apply, data);
	}
	return released;
}
