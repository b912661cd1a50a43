/*
 * libFuzzer harness: YAML into JSON (t/helper/yaml-json.c) and kubeconfig
 * loading (lib/kube/kubeconfig.c). The input is one YAML stream: parsed as
 * a stream of documents (manifests, CRDs), then loaded as the only
 * kubeconfig file (--kubeconfig). Loading runs no exec plugin (that
 * happens only when credentials are asked for), so any input is safe.
 * Property: the parse and the load either succeed or fail with a
 * message, never crash or leak.
 */
#include "compat.h"
#include "json.h"
#include "kube/kubeconfig.h"
#include "strbuf.h"
#include "usage.h"
#include "yaml-json.h"

#include <stdint.h>

static char file[4096];

static void quiet(const char *prefix, const char *msg, void *data)
{
}

static void setup(void)
{
	char tmpl[] = "/tmp/gosbx-fuzz-kubeconfig.XXXXXX";
	char *dir = mkdtemp(tmpl);

	if (!dir)
		abort();
	snprintf(file, sizeof(file), "%s/config", dir);
	set_error_routine(quiet, NULL);
	/* no in-cluster fallback, no other file */
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBECONFIG");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_load_opts o = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct kube_config kc;
	json_t *docs;
	FILE *f;

	if (!*file)
		setup();
	docs = yaml_parse_stream((const char *)data, size, "fuzz", &err);
	if (!docs && !err.len)
		abort(); /* a failure must say why */
	json_decref(docs);
	strbuf_release(&err);

	f = fopen(file, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	o.kubeconfig = file;
	kube_config_load(&kc, &o);
	kube_config_release(&kc);
	return 0;
}
