/*
 * cmd_cancel.c — `stormctl cancel JOB...`.  Every id is checked before the
 * first request goes out, so a typo in the list cancels nothing; after
 * that each job is cancelled on its own and a refusal for one does not
 * stop the rest (the exit status says that something failed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"

int sc_cmd_cancel(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args)
{
	uint64_t *ids = calloc((size_t)args->noperands, sizeof(*ids));
	int worst = SC_EXIT_OK;

	if (!ids)
		sc_die(SC_EXIT_FAILED, "out of memory");
	for (int i = 0; i < args->noperands; i++)
		ids[i] = sc_number_or_die(cmd->name, "job id",
					  args->operands[i], 0, UINT32_MAX);
	for (int i = 0; i < args->noperands; i++) {
		json_t *req = json_object(), *reply = NULL;
		char err[2048];
		int code;

		if (!req)
			sc_die(SC_EXIT_FAILED, "out of memory");
		json_object_set_new(req, "op", json_string("cancel"));
		json_object_set_new(req, "job",
				    json_integer((json_int_t)ids[i]));
		code = sc_call_soft(ctx, req, &reply, err, sizeof(err));
		json_decref(req);
		if (code == SC_EXIT_UNREACH || code == SC_EXIT_PROTO ||
		    code == SC_EXIT_USAGE) {
			/* The manager is gone: the rest would fail alike. */
			unsigned long long id = ids[i];

			free(ids);
			sc_die(code, "%s: job %llu: %s", cmd->name, id, err);
		}
		if (code != SC_EXIT_OK) {
			sc_warn("%s: job %llu: %s", cmd->name,
				(unsigned long long)ids[i], err);
			worst = code;
			continue;
		}
		if (ctx->json)
			sc_print_json(reply);
		else
			printf("Cancelled job %llu (%s)\n",
			       (unsigned long long)ids[i],
			       sc_jstr(reply, "state", "CANCELLED"));
		json_decref(reply);
	}
	free(ids);
	return worst;
}
