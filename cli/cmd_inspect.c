/* pterun inspect: what a program contains and whether this build can run it. */
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"

static const cli_command_help kHelp = {
    "inspect", "MODEL.pte [--data FILE.ptd]... [--memory] [--json] [--verbose]",
    "Print facts about a program: file layout, constants, external data and, per\n"
    "method, its inputs and outputs, operators (with the component that provides\n"
    "each, or the one that would), planned buffers and delegate calls."};

static const char* io_kind(const pterun_io_info* io) {
  return pterun_value_tag_name(io->tag);
}

static void text_io(const pterun_io_info* io, size_t i) {
  char shp[256], dord[128];
  if (io->tag != PTERUN_VALUE_TENSOR) {
    switch (io->tag) {
      case PTERUN_VALUE_INT:
        printf("    %zu: %s = %lld\n", i, io_kind(io), (long long)io->int_value);
        break;
      case PTERUN_VALUE_DOUBLE:
        printf("    %zu: %s = %g\n", i, io_kind(io), io->double_value);
        break;
      case PTERUN_VALUE_BOOL:
        printf("    %zu: %s = %s\n", i, io_kind(io), io->int_value ? "true" : "false");
        break;
      default: printf("    %zu: %s\n", i, io_kind(io)); break;
    }
    return;
  }
  cli_npy_shape_str(io->rank, io->sizes, shp, sizeof shp);
  cli_u8_tuple(io->rank, io->dim_order, dord, sizeof dord);
  printf("    %zu: Tensor %s %s dim_order %s %s%s, %llu bytes\n", i, pterun_dtype_name(io->dtype),
         shp, dord, cli_dynamism_name(io->dynamism), io->planned ? " planned" : " unplanned",
         (unsigned long long)io->nbytes);
}

static void json_io(cli_json* j, const pterun_io_info* io) {
  uint32_t k;
  int tensor = io->tag == PTERUN_VALUE_TENSOR;
  cli_json_begin_object(j);
  cli_json_key(j, "kind");
  cli_json_string(j, io_kind(io));
  cli_json_key(j, "dtype");
  cli_json_string(j, tensor ? pterun_dtype_name(io->dtype) : NULL);
  cli_json_key(j, "shape");
  if (tensor) {
    cli_json_begin_array(j);
    for (k = 0; k < io->rank; ++k) cli_json_int(j, io->sizes[k]);
    cli_json_end_array(j);
  } else {
    cli_json_null(j);
  }
  cli_json_key(j, "dim_order");
  if (tensor) {
    cli_json_begin_array(j);
    for (k = 0; k < io->rank; ++k) cli_json_uint(j, io->dim_order[k]);
    cli_json_end_array(j);
  } else {
    cli_json_null(j);
  }
  cli_json_key(j, "dynamism");
  cli_json_string(j, tensor ? cli_dynamism_name(io->dynamism) : NULL);
  cli_json_key(j, "planned");
  if (tensor)
    cli_json_bool(j, io->planned);
  else
    cli_json_null(j);
  cli_json_key(j, "nbytes");
  if (tensor)
    cli_json_uint(j, io->nbytes);
  else
    cli_json_null(j);
  cli_json_key(j, "value");
  switch (io->tag) {
    case PTERUN_VALUE_INT: cli_json_int(j, io->int_value); break;
    case PTERUN_VALUE_DOUBLE: cli_json_double(j, io->double_value); break;
    case PTERUN_VALUE_BOOL: cli_json_bool(j, io->int_value != 0); break;
    default: cli_json_null(j); break;
  }
  cli_json_end_object(j);
}

/* "aten::add" + "out" -> "aten::add.out", the registry's key form. */
static void op_key(const char* name, const char* overload, char* buf, size_t cap) {
  if (overload && overload[0])
    snprintf(buf, cap, "%s.%s", name, overload);
  else
    snprintf(buf, cap, "%s", name);
}

/* One method, as text or JSON. Returns CLI_EXIT_OK or fails. */
/* A bundled program's test suites: method, cases, inputs/expected outputs. */
static void inspect_bundle(const pterun_bundle* b, cli_json* j) {
  size_t n = pterun_bundle_suite_count(b), k, c;
  char name[128];
  if (j) {
    cli_json_key(j, "bundle");
    cli_json_begin_object(j);
    cli_json_key(j, "version");
    cli_json_uint(j, pterun_bundle_version(b));
    cli_json_key(j, "test_suites");
    cli_json_begin_array(j);
  } else {
    printf("\nbundled program: schema version %u, %zu test suite%s\n", pterun_bundle_version(b), n,
           n == 1 ? "" : "s");
  }
  for (k = 0; k < n; ++k) {
    const char* nm = NULL;
    size_t cases = 0, nin = 0, nout = 0;
    if (pterun_bundle_suite(b, k, &nm, &cases) != PTERUN_STATUS_OK) continue;
    if (cases > 0) (void)pterun_bundle_case(b, k, 0, &nin, &nout);
    if (j) {
      cli_json_begin_object(j);
      cli_json_key(j, "method");
      cli_json_string(j, nm);
      cli_json_key(j, "cases");
      cli_json_begin_array(j);
      for (c = 0; c < cases; ++c) {
        (void)pterun_bundle_case(b, k, c, &nin, &nout);
        cli_json_begin_object(j);
        cli_json_key(j, "inputs");
        cli_json_uint(j, nin);
        cli_json_key(j, "expected_outputs");
        cli_json_uint(j, nout);
        cli_json_end_object(j);
      }
      cli_json_end_array(j);
      cli_json_end_object(j);
    } else {
      cli_esc(nm, name, sizeof name);
      printf("  suite %s: %zu test case%s (%zu inputs, %zu expected outputs each)\n", name, cases,
             cases == 1 ? "" : "s", nin, nout);
    }
  }
  if (j) {
    cli_json_end_array(j);
    cli_json_end_object(j);
  }
}

/* --memory: pterun_program_method_memory with the options a run would use. */
static void inspect_memory(cli_session* s, const char* name, cli_json* j) {
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_method_memory_info mem = PTERUN_METHOD_MEMORY_INFO_INIT;
  mo.registry = s->registry;
  mo.data = (const pterun_data* const*)s->data;
  mo.data_count = s->data_count;
  mo.logger = cli_logger(&s->log);
  pterun_status st = pterun_program_method_memory(s->program, name, &mo, &mem);
  if (j) {
    cli_json_key(j, "memory");
    if (st != PTERUN_STATUS_OK) {
      cli_json_null(j);
      return;
    }
    const struct {
      const char* key;
      size_t bytes;
    } parts[] = {{"runtime_bytes", mem.runtime_bytes},
                 {"planned_bytes", mem.planned_bytes},
                 {"prepared_bytes", mem.prepared_bytes},
                 {"delegate_bytes", mem.delegate_bytes},
                 {"folded_bytes", mem.folded_bytes},
                 {"scratch_bytes", mem.scratch_bytes},
                 {"fused_result_bytes", mem.fused_result_bytes},
                 {"load_peak_bytes", mem.load_peak_bytes}};
    cli_json_begin_object(j);
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; ++k) {
      cli_json_key(j, parts[k].key);
      cli_json_uint(j, parts[k].bytes);
    }
    cli_json_end_object(j);
  } else if (st != PTERUN_STATUS_OK) {
    printf("  memory: unknown (the method does not load: %s)\n", pterun_status_name(st));
  } else {
    printf("  memory: %zu bytes runtime, %zu bytes planned (load peak %zu bytes)\n",
           mem.runtime_bytes, mem.planned_bytes, mem.load_peak_bytes);
    printf(
        "    of runtime: prepared kernel state %zu, delegates %zu, folded constants %zu, "
        "scratch %zu, fused results %zu\n",
        mem.prepared_bytes, mem.delegate_bytes, mem.folded_bytes, mem.scratch_bytes,
        mem.fused_result_bytes);
  }
}

static int inspect_method(cli_session* s, size_t m, cli_json* j, int memory) {
  pterun_method_info mi;
  pterun_status st;
  size_t i, missing = 0;
  uint64_t planned_total = 0;

  if ((st = pterun_program_method_info(s->program, m, &mi)) != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot read method %zu", m);
  if (j) {
    cli_json_begin_object(j);
    cli_json_key(j, "name");
    cli_json_string(j, mi.name);
    cli_json_key(j, "value_count");
    cli_json_uint(j, mi.value_count);
    cli_json_key(j, "instruction_count");
    cli_json_uint(j, mi.instruction_count);
  } else {
    char e[CLI_ESC_CAP];
    printf("\nmethod %s\n", mi.name ? cli_esc(mi.name, e, sizeof e) : "?");
    printf("  values: %zu, instructions: %zu\n", mi.value_count, mi.instruction_count);
  }

  /* inputs, then outputs */
  {
    int pass;
    for (pass = 0; pass < 2; ++pass) {
      size_t n = pass ? mi.output_count : mi.input_count;
      if (j) {
        cli_json_key(j, pass ? "outputs" : "inputs");
        cli_json_begin_array(j);
      } else {
        printf("  %s: %zu\n", pass ? "outputs" : "inputs", n);
      }
      for (i = 0; i < n; ++i) {
        pterun_io_info io;
        memset(&io, 0, sizeof io);
        st = pass ? pterun_program_method_output(s->program, m, i, &io)
                  : pterun_program_method_input(s->program, m, i, &io);
        if (st != PTERUN_STATUS_OK)
          return cli_fail(&s->log, st, "cannot read %s %zu of method %s", pass ? "output" : "input",
                          i, mi.name);
        if (j)
          json_io(j, &io);
        else
          text_io(&io, i);
      }
      if (j) cli_json_end_array(j);
    }
  }

  /* operators */
  if (j) {
    cli_json_key(j, "operators");
    cli_json_begin_array(j);
  } else {
    printf("  operators: %zu\n", mi.operator_count);
  }
  for (i = 0; i < mi.operator_count; ++i) {
    const char *name = NULL, *overload = NULL, *provider, *would;
    char key[512];
    if ((st = pterun_program_method_operator(s->program, m, i, &name, &overload)) !=
        PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot read operator %zu of method %s", i, mi.name);
    op_key(name ? name : "", overload, key, sizeof key);
    provider = pterun_registry_provider(s->registry, key);
    /* The same verdict as the method loader's missing-operator message. */
    would = provider ? NULL : pterun_registry_missing_component(s->registry, key);
    if (!provider) ++missing;
    if (j) {
      cli_json_begin_object(j);
      cli_json_key(j, "name");
      cli_json_string(j, name ? name : "");
      cli_json_key(j, "overload");
      cli_json_string(j, overload ? overload : "");
      cli_json_key(j, "provided_by");
      cli_json_string(j, provider);
      cli_json_key(j, "component");
      cli_json_string(j, provider ? provider : would);
      cli_json_end_object(j);
    } else {
      char e[CLI_ESC_CAP];
      cli_esc(key, e, sizeof e);
      if (provider)
        printf("    %-48s %s\n", e, provider);
      else if (would)
        printf("    %-48s missing (link pterun::%s, not in the registry)\n", e, would);
      else
        printf("    %-48s missing (not implemented by any pterun component)\n", e);
    }
  }
  if (j) {
    cli_json_end_array(j);
    cli_json_key(j, "missing_operator_count");
    cli_json_uint(j, missing);
  } else if (missing) {
    printf("  missing operators: %zu (method cannot be loaded by this build)\n", missing);
  }

  /* planned buffers */
  if (j) {
    cli_json_key(j, "planned_buffer_sizes");
    cli_json_begin_array(j);
  } else {
    printf("  planned buffers: %zu\n", mi.planned_buffer_count);
  }
  for (i = 0; i < mi.planned_buffer_count; ++i) {
    uint64_t size = 0;
    if ((st = pterun_program_planned_buffer_size(s->program, m, i, &size)) != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot read planned buffer %zu of method %s", i, mi.name);
    planned_total += size;
    if (j)
      cli_json_uint(j, size);
    else
      printf("    %zu: %llu bytes\n", i, (unsigned long long)size);
  }
  if (j) {
    cli_json_end_array(j);
    cli_json_key(j, "planned_bytes");
    cli_json_uint(j, planned_total);
  }

  /* delegates */
  if (j) {
    cli_json_key(j, "delegates");
    cli_json_begin_array(j);
  } else {
    printf("  delegate calls: %zu\n", mi.delegate_count);
  }
  for (i = 0; i < mi.delegate_count; ++i) {
    const char* backend = NULL;
    if ((st = pterun_program_method_delegate(s->program, m, i, &backend)) != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot read delegate %zu of method %s", i, mi.name);
    if (j)
      cli_json_string(j, backend ? backend : "");
    else {
      /* Which component runs it: loaded, available to link, or none. */
      char e[CLI_ESC_CAP];
      const char* comp = backend ? pterun_component_for_backend(backend) : NULL;
      const char* how = backend && pterun_registry_backend(s->registry, backend) ? ""
                        : comp ? " (not loaded: link "
                               : " (no pterun component runs it: the method will not load)";
      printf("    %zu: %s", i, backend ? cli_esc(backend, e, sizeof e) : "?");
      if (comp && *how == '\0')
        printf(" (%s)\n", comp);
      else if (comp)
        printf("%s%s)\n", how, comp);
      else
        printf("%s\n", how);
    }
  }
  if (j) cli_json_end_array(j);
  if (memory) inspect_memory(s, mi.name, j);
  if (j) cli_json_end_object(j);
  return CLI_EXIT_OK;
}

int cli_cmd_inspect(int argc, char** argv) {
  const char* model = NULL;
  cli_strlist data = {0};
  int json = 0, verbose = 0, memory = 0, r, rc = CLI_EXIT_OK;
  cli_session s = {0};
  pterun_program_info pi;
  cli_json jw, *j = NULL;
  size_t m, k, npos = 0;
  const cli_optspec opts[] = {
      CLI_STRS("data", &data, "FILE.ptd",
               "an external data file (repeatable); its keys are listed"),
      CLI_FLAG("memory", 0, &memory,
               "the memory each method needs, by part, before any load: a\n"
               "trial load with the default options (the time of one load)"),
      CLI_FLAG("json", 0, &json, "print one JSON object instead of text"),
      CLI_OPT_VERBOSE(&verbose), CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  if ((r = cli_parse(argc, argv, &kHelp, groups, &model, 1, &npos)) != CLI_PARSE_OK) {
    cli_strlist_free(&data);
    return CLI_PARSE_EXIT(r);
  }
  if (model == NULL) {
    cli_strlist_free(&data);
    return cli_usage_error("inspect", "missing MODEL.pte");
  }

  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) {
    rc = CLI_EXIT_FAIL;
    goto done;
  }
  memset(&pi, 0, sizeof pi);
  pterun_program_get_info(s.program, &pi);

  if (json) {
    j = &jw;
    cli_json_init(j, stdout);
    cli_json_begin_object(j);
    cli_json_key(j, "file");
    cli_json_string(j, model);
    cli_json_key(j, "file_size");
    cli_json_uint(j, pi.file_size);
    cli_json_key(j, "program_size");
    cli_json_uint(j, pi.program_size);
    cli_json_key(j, "extended_header");
    cli_json_bool(j, pi.has_extended_header);
    cli_json_key(j, "segment_base_offset");
    cli_json_uint(j, pi.segment_base_offset);
    cli_json_key(j, "segment_data_size");
    cli_json_uint(j, pi.segment_data_size);
    cli_json_key(j, "segment_count");
    cli_json_uint(j, pi.segment_count);
    cli_json_key(j, "constant_count");
    cli_json_uint(j, pi.constant_count);
    cli_json_key(j, "constant_bytes");
    cli_json_uint(j, pi.constant_bytes);
    cli_json_key(j, "constant_storage");
    cli_json_string(j, pi.constant_count == 0      ? "none"
                       : pi.legacy_constant_buffer ? "inline"
                                                   : "segment");
    cli_json_key(j, "mutable_data_count");
    cli_json_uint(j, pi.mutable_data_count);
    cli_json_key(j, "named_data_count");
    cli_json_uint(j, pi.named_data_count);
    cli_json_key(j, "data_files");
    cli_json_begin_array(j);
    for (k = 0; k < s.data_count; ++k) {
      size_t n = pterun_data_count(s.data[k]), e;
      cli_json_begin_object(j);
      cli_json_key(j, "path");
      cli_json_string(j, data.items[k]);
      cli_json_key(j, "keys");
      cli_json_begin_array(j);
      for (e = 0; e < n; ++e) cli_json_string(j, pterun_data_key(s.data[k], e));
      cli_json_end_array(j);
      cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_key(j, "methods");
    cli_json_begin_array(j);
  } else {
    printf("program %s\n", model);
    printf("  file size: %llu bytes (flatbuffer %llu bytes)\n", (unsigned long long)pi.file_size,
           (unsigned long long)pi.program_size);
    if (pi.has_extended_header)
      printf("  extended header: yes (segment base %llu, segment data %llu bytes)\n",
             (unsigned long long)pi.segment_base_offset, (unsigned long long)pi.segment_data_size);
    else
      printf("  extended header: no\n");
    printf("  segments: %zu\n", pi.segment_count);
    if (pi.constant_count == 0)
      printf("  constants: none\n");
    else
      printf("  constants: %zu tensors, %llu bytes, stored %s\n", pi.constant_count,
             (unsigned long long)pi.constant_bytes,
             pi.legacy_constant_buffer ? "inline (legacy constant_buffer)" : "in a segment");
    printf("  mutable data: %zu\n", pi.mutable_data_count);
    printf("  named data: %zu\n", pi.named_data_count);
    for (k = 0; k < s.data_count; ++k) {
      size_t n = pterun_data_count(s.data[k]), e;
      printf("  data file %s: %zu keys\n", data.items[k], n);
      for (e = 0; e < n; ++e) {
        char esc[CLI_ESC_CAP];
        printf("    %s\n", cli_esc(pterun_data_key(s.data[k], e), esc, sizeof esc));
      }
    }
    printf("  methods: %zu\n", pi.method_count);
  }
  for (m = 0; m < pterun_program_method_count(s.program); ++m) {
    if (inspect_method(&s, m, j, memory) != CLI_EXIT_OK) {
      /* stdout may hold half a JSON document; the error line says why */
      if (j) fflush(stdout);
      rc = CLI_EXIT_FAIL;
      goto done;
    }
  }
  if (j) cli_json_end_array(j);
  if (s.bundle != NULL) inspect_bundle(s.bundle, j);
  if (j) {
    cli_json_end_object(j);
    cli_json_finish(j);
  }
done:
  cli_session_close(&s);
  cli_strlist_free(&data);
  return rc;
}
