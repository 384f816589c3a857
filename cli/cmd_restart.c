/*
 * cmd_restart.c — `stormctl restart JOB [--epoch E]`: the job's processes
 * go and it is queued again, to run on from a committed checkpoint epoch
 * (the last one unless --epoch) on the nodes the scheduler gives it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "commands.h"

int sc_cmd_restart(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		   const struct sc_args *args)
{
	uint64_t id = sc_number_or_die(cmd->name, "job id", args->operands[0],
				       0, UINT32_MAX), epoch = 0;
	json_t *req = json_object(), *reply;

	for (int k = 0; k < args->nopts; k++)
		if (args->opts[k].id == SC_OPT_EPOCH)
			epoch = sc_number_or_die(cmd->name, "epoch",
						 args->opts[k].val, 1,
						 UINT32_MAX);
	if (req) {
		json_object_set_new(req, "op", json_string("restart"));
		json_object_set_new(req, "job", json_integer((json_int_t)id));
		if (epoch)
			json_object_set_new(req, "epoch",
					    json_integer((json_int_t)epoch));
	}
	reply = sc_call_or_die(ctx, cmd->name, req);
	if (ctx->json)
		sc_print_json(reply);
	else
		printf("Restarting job %" PRIu64 " from checkpoint epoch %"
		       PRId64 "\n", id, sc_jint(reply, "epoch", 0));
	json_decref(reply);
	return SC_EXIT_OK;
}
