//===- CgcConformanceMain.cpp - the cgc-conformance driver ---------------===//
//
//   cgc-conformance [--data DIR] [--suites node,simple,...] [--filter TEXT]
//     [--expected FILE [--update-expected]] [--tolerances FILE]
//     [--pipeline=none|plan] [-j N] [--timeout S]
//   cgc-conformance --emit-doc docs/conformance.md --expected FILE
//
// Every test folder holds model.onnx and test_data_set_*/{input,output}_*.pb.
// A test passes when the model imports, runs and every output of every data
// set matches (rtol 1e-5, atol 1e-6 unless the tolerances file gives the
// test looser ones, each with its reason). It is UNSUPPORTED when the
// importer rejects it as unsupported (an op, a domain, an element type or
// an attribute value it does not handle), and FAILs otherwise.
//
// Each test runs in a forked child, so a crash or a hang fails that test
// only. With --expected the statuses are compared exactly (Expectations.h):
// a changed status, a test without a line and a line without a test fail
// the run; --update-expected rewrites the lines of the tests run instead.
//
//===----------------------------------------------------------------------===//

#include "cgc/Tools/cgc-conformance/CgcConformanceMain.h"

#include "Expectations.h"

#include "cgc/Interpreter/RunnerSupport.h"

#include "cgc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;
using namespace cgc::conformance;
namespace cl = llvm::cl;

namespace {

enum class PipelineKind { None, Plan };

struct Options {
  cl::OptionCategory category{"cgc-conformance options"};
  cl::opt<std::string> data{
      "data", cl::desc("Root of the ONNX backend test data"),
      cl::init("/usr/include/onnx/backend/test/data"), cl::cat(category)};
  cl::opt<std::string> suites{
      "suites", cl::desc("Comma-separated suites (folders under --data)"),
      cl::init("node,pytorch-converted,pytorch-operator,simple"),
      cl::cat(category)};
  cl::opt<std::string> filter{
      "filter", cl::desc("Only run tests whose name contains this text"),
      cl::cat(category)};
  cl::opt<std::string> expected{
      "expected", cl::desc("Expected statuses (test/conformance/expected.txt)"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<bool> updateExpected{
      "update-expected",
      cl::desc("Rewrite --expected from this run instead of checking"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> tolerances{
      "tolerances",
      cl::desc("Per-test rtol/atol overrides, each with a reason"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> emitDoc{
      "emit-doc",
      cl::desc("Write the markdown report (grouped by op) of --expected to "
               "FILE and exit"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> docSection{
      "doc-section",
      cl::desc("With --emit-doc: put the report under a '## TITLE' heading "
               "(its own headings one level down), so that several suites "
               "share one page"),
      cl::value_desc("TITLE"), cl::cat(category)};
  cl::opt<bool> appendDoc{
      "append-doc",
      cl::desc("With --emit-doc and --doc-section: append the section to "
               "FILE instead of writing a new page"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> gpuExpected{
      "gpu-expected",
      cl::desc("With --emit-doc: the node tests' results through the GPU "
               "path (test/conformance/gpu-expected.txt, written by "
               "utils/gpu/gpu_kernel_check.py --record)"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<PipelineKind> pipeline{
      "pipeline", cl::desc("Passes to run before interpreting"),
      cl::values(clEnumValN(PipelineKind::None, "none", "none (default)"),
                 clEnumValN(PipelineKind::Plan, "plan",
                            "partition, fuse and plan buffers; run over one "
                            "byte arena")),
      cl::init(PipelineKind::None), cl::cat(category)};
  cl::opt<unsigned> jobs{
      "j", cl::desc("Tests run in parallel"),
      cl::init(std::max(1u, std::thread::hardware_concurrency())),
      cl::cat(category)};
  cl::opt<unsigned> timeout{"timeout", cl::desc("Seconds per test"),
                            cl::init(300), cl::cat(category)};
  cl::opt<double> rtol{"rtol", cl::desc("Default relative tolerance"),
                       cl::init(1e-5), cl::cat(category)};
  cl::opt<double> atol{"atol", cl::desc("Default absolute tolerance"),
                       cl::init(1e-6), cl::cat(category)};
  cl::opt<bool> bindInputs{
      "bind-inputs",
      cl::desc("When the importer needs an input as a constant (axes, pads, "
               "scales, ...), bind it to each data set's value, as `cgc "
               "--bind` does (default on)"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> allowDeclaredTypeMismatch{
      "allow-declared-type-mismatch",
      cl::desc("Import a model whose declared types disagree with the "
               "inferred ones (a warning, not an error)"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> quiet{"quiet",
                      cl::desc("Print only FAIL lines and the summary"),
                      cl::init(false), cl::cat(category)};
};

void reportError(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cgc-conformance") << message << "\n";
}

struct TestCase {
  std::string id;   ///< suite/test_name
  std::string path; ///< folder
  double rtol, atol;
};

struct Result {
  std::string status; ///< PASS, FAIL or UNSUPPORTED
  std::string reason;
  /// Where a test that does not pass stopped: `op` (an op the importer
  /// lacks), `import`, `pipeline`, `data` (the test's files), `run`,
  /// `mismatch` (an output differs), `crash` or `timeout`. Expectations
  /// record it, so a failure that moves (import -> mismatch) is seen.
  std::string kind = "";
};

/// One line: no tabs or newlines, at most ~300 characters.
std::string oneLine(StringRef text) {
  std::string s;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r')
      c = ' ';
    s.push_back(c);
  }
  if (s.size() > 300)
    s = s.substr(0, 297) + "...";
  return s;
}

/// Sorted subfolders of `dir` whose name starts with `prefix`.
std::vector<std::string> listDirs(StringRef dir, StringRef prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(prefix) && llvm::sys::fs::is_directory(it->path()))
      names.push_back(name.str());
  }
  llvm::sort(names);
  return names;
}

/// Files `prefix<i>.pb` for i = 0, 1, ... until one is missing.
std::vector<std::string> numberedFiles(StringRef dir, StringRef prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, prefix + std::to_string(i) + ".pb");
    if (!llvm::sys::fs::exists(path))
      return files;
    files.push_back(path.str().str());
  }
}

bool isUnsupportedMessage(StringRef message) {
  std::string lower = message.lower();
  return StringRef(lower).contains("unsupported") ||
         StringRef(lower).contains("not supported");
}

//===----------------------------------------------------------------------===//
// Running one test (in the child)
//===----------------------------------------------------------------------===//

/// The backend tests store bfloat16 tensors as uint16 bit patterns.
void relabelBfloat16(HostTensor &t, Type want) {
  if (t.scalar == Scalar::U16 && want.isBF16()) {
    t.dtype = want;
    t.scalar = Scalar::BF16;
  }
}

/// Names `X` of the hints "'X' is a graph input: fix its value at compile
/// time with --bind" in an importer message.
void boundInputHints(StringRef message, std::set<std::string> &names) {
  StringRef marker = "' is a graph input";
  for (size_t at = message.find(marker); at != StringRef::npos;
       at = message.find(marker, at + 1)) {
    size_t open = message.rfind('\'', at - 1);
    if (open != StringRef::npos)
      names.insert(message.slice(open + 1, at).str());
  }
}

struct TestRun {
  const TestCase &test;
  const Options &opts;
  MLIRContext &context;
  std::vector<std::string> errors; ///< diagnostics of the current attempt
  std::vector<std::string> inputNames;
  std::set<std::string> unknownOps; ///< ops the importer does not have

  std::string firstError() const {
    if (errors.empty())
      return "failed without a diagnostic";
    return StringRef(errors.front()).drop_front(7).str(); // "error: "
  }

  Result importFailure() const {
    std::string message = firstError();
    if (!unknownOps.empty())
      return {"UNSUPPORTED",
              "import: uses " + *unknownOps.begin() +
                  " (not an op the importer supports): " + message,
              "op"};
    return {isUnsupportedMessage(message) ? "UNSUPPORTED" : "FAIL",
            "import: " + message, "import"};
  }

  /// Imports the model with `bound` inputs fixed to the data set's files.
  OwningOpRef<ModuleOp> import(const std::set<std::string> &bound,
                               StringRef setDir) {
    errors.clear();
    ImportOptions options;
    options.allowDeclaredTypeMismatch = opts.allowDeclaredTypeMismatch;
    for (const std::string &name : bound) {
      auto it = llvm::find(inputNames, name);
      SmallString<256> path(setDir);
      llvm::sys::path::append(
          path, "input_" + std::to_string(it - inputNames.begin()) + ".pb");
      options.boundInputs[name] = path.str().str();
    }
    SmallString<256> modelPath(test.path);
    llvm::sys::path::append(modelPath, "model.onnx");
    return importONNXModel(modelPath, &context, options);
  }

  /// Runs one data set on `func`; returns a FAIL/UNSUPPORTED result or
  /// nullopt when every output matches.
  std::optional<Result> runSet(func::FuncOp func, StringRef set,
                               StringRef setDir) {
    std::vector<std::string> inputFiles = numberedFiles(setDir, "input_");
    std::vector<std::string> outputFiles = numberedFiles(setDir, "output_");
    if (inputFiles.size() != inputNames.size())
      return Result{"FAIL",
                    (set + ": " + Twine(inputFiles.size()) +
                     " input files for " + Twine(inputNames.size()) +
                     " graph inputs")
                        .str(),
                    "data"};
    if (outputFiles.size() != func.getNumResults())
      return Result{"FAIL",
                    (set + ": " + Twine(outputFiles.size()) +
                     " output files for " + Twine(func.getNumResults()) +
                     " outputs")
                        .str(),
                    "data"};
    std::vector<HostTensor> inputs;
    std::string error, name;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      // Arguments are the graph inputs that were not bound.
      auto it = llvm::find(inputNames, argName(func, i));
      if (it == inputNames.end())
        return Result{"FAIL",
                      "argument '" + argName(func, i) +
                          "' is not a graph input",
                      "import"};
      HostTensor t;
      if (!readTensorProto(inputFiles[it - inputNames.begin()], &context, t,
                           name, error))
        return Result{isUnsupportedMessage(error) ? "UNSUPPORTED" : "FAIL",
                      (set + ": " + error).str(), "data"};
      relabelBfloat16(
          t, cast<ShapedType>(func.getArgument(i).getType()).getElementType());
      inputs.push_back(std::move(t));
    }
    errors.clear();
    InterpreterOptions interpreterOptions;
    interpreterOptions.useArena = opts.pipeline == PipelineKind::Plan;
    FailureOr<std::vector<HostTensor>> outputs =
        interpret(func, inputs, interpreterOptions);
    if (failed(outputs))
      return Result{"FAIL", (set + ": run: " + firstError()).str(), "run"};
    for (auto [i, file] : llvm::enumerate(outputFiles)) {
      HostTensor expected;
      if (!readTensorProto(file, &context, expected, name, error))
        return Result{isUnsupportedMessage(error) ? "UNSUPPORTED" : "FAIL",
                      (set + ": " + error).str(), "data"};
      relabelBfloat16(expected, (*outputs)[i].dtype);
      Comparison c =
          compareTensors((*outputs)[i], expected, test.rtol, test.atol);
      if (!c.ok)
        return Result{"FAIL",
                      (set + ": output #" + Twine(i) + " '" +
                       resultName(func, i) + "': " + c.message)
                          .str(),
                      "mismatch"};
    }
    return std::nullopt;
  }

  Result run() {
    SmallString<256> modelPath(test.path);
    llvm::sys::path::append(modelPath, "model.onnx");
    std::string error;
    if (!modelInputNames(modelPath.str().str(), inputNames, error))
      return {"FAIL", error, "import"};
    std::set<std::string> ops;
    collectModelOps(modelPath.str().str(), ops, error);
    std::set<std::string> known;
    for (const std::string &op : supportedONNXOps())
      known.insert(op);
    for (const std::string &op : ops)
      if (!known.count(op))
        unknownOps.insert(op);

    std::vector<std::string> sets = listDirs(test.path, "test_data_set_");
    if (sets.empty())
      return {"FAIL", "no test_data_set_* folder", "data"};
    // Inputs the importer needs as constants (axes, pads, ...) are bound to
    // each data set's values, as `cgc --bind` does.
    std::set<std::string> bound;
    OwningOpRef<ModuleOp> unboundModule;
    for (const std::string &set : sets) {
      SmallString<256> setDir(test.path);
      llvm::sys::path::append(setDir, set);
      OwningOpRef<ModuleOp> module;
      if (bound.empty() && unboundModule) {
        module = unboundModule->clone();
      } else {
        for (int attempt = 0; attempt < 8; ++attempt) {
          module = import(bound, setDir);
          if (module || !opts.bindInputs)
            break;
          std::set<std::string> hints;
          for (const std::string &e : errors)
            boundInputHints(e, hints);
          size_t before = bound.size();
          for (const std::string &h : hints)
            if (llvm::is_contained(inputNames, h))
              bound.insert(h);
          if (bound.size() == before)
            break;
        }
        if (!module)
          return importFailure();
        if (bound.empty())
          unboundModule = module->clone();
      }
      if (opts.pipeline == PipelineKind::Plan &&
          failed(runPlanPipeline(*module)))
        return {"FAIL", "pipeline: " + firstError(), "pipeline"};
      func::FuncOp func = findMain(*module);
      if (!func)
        return {"FAIL", "no main function", "import"};
      if (std::optional<Result> failure = runSet(func, set, setDir))
        return *failure;
    }
    if (bound.empty())
      return {"PASS", ""};
    std::string names;
    for (const std::string &b : bound)
      names += (names.empty() ? "" : ", ") + b;
    return {"PASS", "inputs bound at compile time: " + names};
  }
};

Result runTest(const TestCase &test, const Options &opts) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  TestRun run{test, opts, context, {}, {}, {}};
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      run.errors.push_back(formatDiagnostic(diag));
    return success();
  });
  return run.run();
}

//===----------------------------------------------------------------------===//
// Running all tests (forked children)
//===----------------------------------------------------------------------===//

struct Child {
  pid_t pid;
  int fd;
  size_t index;
  std::string output;
  std::chrono::steady_clock::time_point start;
  bool killed = false;
};

Result finish(Child &child) {
  int status = 0;
  waitpid(child.pid, &status, 0);
  close(child.fd);
  if (child.killed)
    return {"FAIL", "timed out", "timeout"};
  if (WIFSIGNALED(status))
    return {"FAIL",
            "crashed (signal " + std::to_string(WTERMSIG(status)) + ")",
            "crash"};
  StringRef out(child.output);
  auto [status_, rest] = out.trim().split('\t');
  auto [kind, reason] = rest.split('\t');
  if (status_ != "PASS" && status_ != "FAIL" && status_ != "UNSUPPORTED")
    return {"FAIL", "the test process exited with status " +
                        std::to_string(WEXITSTATUS(status)) +
                        " without a result",
            "crash"};
  return {status_.str(), reason.str(), kind.str()};
}

std::vector<Result>
runAll(const std::vector<TestCase> &tests, const Options &opts,
       llvm::function_ref<void(size_t, const Result &)> report) {
  std::vector<std::optional<Result>> results(tests.size());
  std::vector<Child> running;
  size_t next = 0, printed = 0;
  unsigned jobs = std::max(1u, (unsigned)opts.jobs);
  llvm::outs().flush();
  llvm::errs().flush();
  while (printed < tests.size()) {
    while (running.size() < jobs && next < tests.size()) {
      int fds[2];
      if (pipe(fds) != 0) {
        results[next] = Result{"FAIL", "cannot create a pipe", "crash"};
        ++next;
        continue;
      }
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        Result r = runTest(tests[next], opts);
        std::string line =
            r.status + "\t" + r.kind + "\t" + oneLine(r.reason) + "\n";
        (void)!write(fds[1], line.data(), line.size());
        close(fds[1]);
        _exit(0);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        results[next] = Result{"FAIL", "cannot fork", "crash"};
        ++next;
        continue;
      }
      running.push_back(
          {pid, fds[0], next++, "", std::chrono::steady_clock::now()});
    }
    std::vector<pollfd> fds;
    for (Child &c : running)
      fds.push_back({c.fd, POLLIN, 0});
    if (!fds.empty())
      poll(fds.data(), fds.size(), 200);
    for (size_t k = 0; k < running.size();) {
      Child &c = running[k];
      bool done = false;
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        ssize_t n = read(c.fd, buffer, sizeof(buffer));
        if (n > 0)
          c.output.append(buffer, n);
        else
          done = true;
      }
      auto elapsed = std::chrono::steady_clock::now() - c.start;
      if (!done && !c.killed && elapsed > std::chrono::seconds(opts.timeout)) {
        kill(c.pid, SIGKILL);
        c.killed = true;
      }
      if (done) {
        results[c.index] = finish(c);
        fds.erase(fds.begin() + k);
        running.erase(running.begin() + k);
      } else {
        ++k;
      }
    }
    while (printed < tests.size() && results[printed]) {
      report(printed, *results[printed]);
      ++printed;
    }
  }
  std::vector<Result> all;
  for (auto &r : results)
    all.push_back(*r);
  return all;
}

//===----------------------------------------------------------------------===//
// Expected results, tolerances and the report
//===----------------------------------------------------------------------===//

struct Tolerance {
  double rtol, atol;
  std::string reason;
};

/// Lines `suite/test rtol=R atol=A  # reason`; the reason is required, and
/// a test may have one line only.
bool readTolerances(StringRef path, std::map<std::string, Tolerance> &entries,
                    double rtol, double atol, std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    error = "cannot read '" + path.str() + "'";
    return false;
  }
  SmallVector<StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (auto [n, line] : llvm::enumerate(lines)) {
    auto [body, comment] = line.split('#');
    body = body.trim();
    if (body.empty())
      continue;
    std::string where = path.str() + ":" + std::to_string(n + 1) + ": ";
    if (comment.trim().empty()) {
      error = where + "every tolerance override needs a reason after '#'";
      return false;
    }
    SmallVector<StringRef> fields;
    body.split(fields, ' ', -1, /*KeepEmpty=*/false);
    Tolerance tol = {rtol, atol, comment.trim().str()};
    for (StringRef field : ArrayRef<StringRef>(fields).drop_front()) {
      auto [key, value] = field.split('=');
      double v;
      if ((key != "rtol" && key != "atol") || value.getAsDouble(v)) {
        error =
            where + "expected rtol=R and/or atol=A, got '" + field.str() + "'";
        return false;
      }
      (key == "rtol" ? tol.rtol : tol.atol) = v;
    }
    if (!entries.try_emplace(fields[0].str(), tol).second) {
      error = where + fields[0].str() + " has a tolerance already";
      return false;
    }
  }
  return true;
}

/// The header of an expectations file; `data` is the suites' root, named
/// since two ONNX releases' suites are kept (ONNX 1.12's, 1.23's).
std::string expectedHeader(StringRef data) {
  return "# Expected results of the ONNX backend tests under " + data.str() +
         "\n# on the reference interpreter: PASS, FAIL or UNSUPPORTED and, "
         "for a test\n# that does not pass, where it stopped (op, import, "
         "pipeline, data, run,\n# mismatch, crash, timeout), compared "
         "exactly by `make conformance`.\n# Regenerate with\n"
         "#   make conformance CONFORMANCE_FLAGS=--update-expected\n";
}

/// Rewrites the lines of the tests run (and drops the selected lines of
/// tests not on disk); the other lines are kept.
bool updateExpectations(StringRef path, StringRef data,
                        const std::vector<TestCase> &tests,
                        const std::vector<Result> &results,
                        const std::function<bool(StringRef)> &selected,
                        std::string &error) {
  ExpectationFile file;
  if (llvm::sys::fs::exists(path) && !readExpectations(path, file, error))
    return false;
  for (auto it = file.entries.begin(); it != file.entries.end();)
    it = selected(it->first) ? file.entries.erase(it) : std::next(it);
  for (auto [test, result] : llvm::zip(tests, results))
    file.entries[test.id] = {result.status, result.kind, result.reason};
  return writeExpectations(path, expectedHeader(data), file.entries, error);
}

/// The op a test is about: the longest op name (of the ops seen in the
/// suites) that prefixes the test name, compared without case and '_' (and
/// without the "operator_" of the pytorch-operator tests); else the model's
/// only op, else the suite.
std::string groupOf(StringRef id, const std::set<std::string> &modelOps,
                    const std::set<std::string> &allOps) {
  auto squash = [](StringRef s) {
    std::string out;
    for (char c : s.lower())
      if (c != '_')
        out.push_back(c);
    return out;
  };
  auto [suite, test] = id.split('/');
  test.consume_front("test_");
  test.consume_front("operator_");
  std::string key = squash(test);
  // Abbreviations the ONNX test names use.
  static const std::pair<StringRef, StringRef> kAliases[] = {
      {"mvn", "MeanVarianceNormalization"},
      {"nllloss", "NegativeLogLikelihoodLoss"},
      {"sce", "SoftmaxCrossEntropyLoss"}};
  for (auto [prefix, op] : kAliases)
    if (StringRef(key).starts_with(prefix))
      return op.str();
  std::string best;
  for (const std::string &op : allOps) {
    std::string name = squash(op);
    StringRef trimmed(name);
    bool match =
        StringRef(key).starts_with(name) ||
        (trimmed.consume_back("loss") && StringRef(key).starts_with(trimmed));
    if (match && op.size() > best.size())
      best = op;
  }
  if (!best.empty())
    return best;
  if (modelOps.size() == 1)
    return *modelOps.begin();
  return "(" + suite.str() + " models)";
}

/// The GPU path's results on the node tests, next to the interpreter's on
/// the same tests, and the tests the interpreter passes but the GPU path
/// does not.
void emitGpuSummary(llvm::raw_ostream &os,
                    std::map<std::string, Expected> &expected,
                    const ExpectationFile &gpuFile, StringRef gpuPath,
                    StringRef h2) {
  const std::map<std::string, Expected> &gpu = gpuFile.entries;
  int passed = 0, failed = 0, notCompiled = 0, bound = 0, interp = 0;
  for (auto &[id, entry] : gpu) {
    if (entry.status == "PASS") {
      ++passed;
      bound += StringRef(entry.reason).starts_with("bound");
    } else {
      (entry.status == "FAIL" ? failed : notCompiled)++;
    }
    auto it = expected.find(id);
    interp += it != expected.end() && it->second.status == "PASS";
  }
  int total = gpu.size();
  auto pct = [&](int n) {
    return llvm::formatv("{0:F1}", 100.0 * n / std::max(total, 1)).str();
  };
  os << h2 << " Through the GPU path\n\n"
     << "From `" << gpuPath << "` (written by "
        "`utils/gpu/gpu_kernel_check.py --record` from a run on the GPU, see "
        "docs/kernels.md): every node test that `cgc` compiles into a "
        "package, run with `cgc-run --check` (rtol 1e-5, atol 1e-6 as "
        "here; bfloat16 outputs rtol 1e-2; the overrides of tolerances.txt "
        "and, with their reasons, of gpu-tolerances.txt). "
        "UNSUPPORTED: cgc does not compile the test for the GPU.\n\n"
     << (gpuFile.recordedAt.empty()
             ? std::string("The file does not say which commit it was "
                           "recorded at: these results may describe older "
                           "code.")
             : "Recorded at " + gpuFile.recordedAt + ".")
     << "\n\n"
     << "**GPU path: " << passed << " passed, " << failed << " failed, "
     << notCompiled << " unsupported of " << total << " node tests** ("
     << pct(passed) << "%), against " << interp << " (" << pct(interp)
     << "%) through the interpreter. " << bound
     << " of the passing tests fix inputs at compile time with `--bind`, "
        "as cgc asks.\n\n"
     << "Node tests the interpreter passes and the GPU path does not:\n\n"
     << "| test | gpu | reason |\n| --- | --- | --- |\n";
  for (auto &[id, entry] : gpu) {
    auto it = expected.find(id);
    if (entry.status == "PASS" || it == expected.end() ||
        it->second.status != "PASS")
      continue;
    std::string reason = entry.reason;
    for (char &c : reason)
      if (c == '|')
        c = '/';
    os << "| " << id << " | " << entry.status << " | " << reason << " |\n";
  }
  os << "\n";
}

/// The tests compared with looser tolerances, and why.
void emitTolerances(llvm::raw_ostream &os,
                    const std::map<std::string, Tolerance> &tolerances) {
  os << "Tests compared with looser tolerances:\n\n"
     << "| test | rtol | atol | reason |\n| --- | ---: | ---: | --- |\n";
  for (const auto &[id, tol] : tolerances) {
    std::string reason = tol.reason;
    for (char &c : reason)
      if (c == '|')
        c = '/';
    os << "| " << id << " | " << llvm::format("%g", tol.rtol) << " | "
       << llvm::format("%g", tol.atol) << " | " << reason << " |\n";
  }
  os << "\n";
}

LogicalResult emitDoc(const Options &opts) {
  ExpectationFile expectedFile;
  std::string error;
  if (opts.expected.empty() ||
      !readExpectations(opts.expected, expectedFile, error)) {
    reportError(error.empty() ? "--emit-doc needs --expected FILE" : error);
    return failure();
  }
  std::map<std::string, Expected> &expected = expectedFile.entries;
  std::map<std::string, std::set<std::string>> testOps;
  std::set<std::string> allOps;
  for (auto &[id, entry] : expected) {
    SmallString<256> path(opts.data);
    llvm::sys::path::append(path, id, "model.onnx");
    std::set<std::string> ops;
    std::string ignored;
    collectModelOps(path.str().str(), ops, ignored);
    allOps.insert(ops.begin(), ops.end());
    testOps[id] = std::move(ops);
  }
  std::map<std::string, Tolerance> tolerances;
  if (!opts.tolerances.empty() &&
      !readTolerances(opts.tolerances, tolerances, opts.rtol, opts.atol,
                      error)) {
    reportError(error);
    return failure();
  }
  ExpectationFile gpuFile;
  if (!opts.gpuExpected.empty() &&
      !readExpectations(opts.gpuExpected, gpuFile, error)) {
    reportError(error);
    return failure();
  }
  const std::map<std::string, Expected> &gpu = gpuFile.entries;
  struct Group {
    int passed = 0, failed = 0, unsupported = 0, gpuPassed = 0, gpuTests = 0;
    std::vector<std::string> tests, notPassing;
  };
  std::map<std::string, Group> groups;
  int passed = 0, failed = 0, unsupported = 0;
  for (auto &[id, entry] : expected) {
    Group &g = groups[groupOf(id, testOps[id], allOps)];
    g.tests.push_back(id);
    if (auto it = gpu.find(id); it != gpu.end()) {
      ++g.gpuTests;
      g.gpuPassed += it->second.status == "PASS";
    }
    if (entry.status == "PASS") {
      ++g.passed;
      ++passed;
      continue;
    }
    (entry.status == "FAIL" ? g.failed : g.unsupported)++;
    (entry.status == "FAIL" ? failed : unsupported)++;
    g.notPassing.push_back(id);
  }
  if (opts.appendDoc && opts.docSection.empty()) {
    reportError("--append-doc needs --doc-section TITLE");
    return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(opts.emitDoc, ec,
                          opts.appendDoc ? llvm::sys::fs::OF_Append
                                         : llvm::sys::fs::OF_None);
  if (ec) {
    reportError("cannot write '" + opts.emitDoc + "': " + ec.message());
    return failure();
  }
  // A section's own headings sit one level below its title.
  std::string h2 = opts.docSection.empty() ? "##" : "###";
  int total = passed + failed + unsupported;
  if (!opts.appendDoc)
    os << (gpu.empty() ? "# ONNX backend conformance of the reference "
                         "interpreter\n\n"
                       : "# ONNX backend conformance of the reference "
                         "interpreter and the GPU path\n\n");
  if (!opts.docSection.empty())
    os << "## " << opts.docSection << "\n\n";
  os << "Generated by `cgc-conformance --emit-doc` from `" << opts.expected
     << "`; do not edit. `make conformance` runs every test of the suites "
     << opts.suites << " under `" << opts.data
     << "` through the importer and `cgc-interp`'s interpreter and compares "
        "with the expected outputs (rtol "
     << llvm::format("%g", opts.rtol.getValue()) << ", atol "
     << llvm::format("%g", opts.atol.getValue());
  if (!opts.tolerances.empty())
    os << " unless `" << opts.tolerances
       << "` gives a test looser ones, with its reason";
  os << "). The statuses are compared exactly with `" << opts.expected
     << "`: a changed status (FAIL <-> "
        "UNSUPPORTED included) or a changed kind (where a test that does "
        "not pass stops: op, import, pipeline, data, run, mismatch, crash, "
        "timeout), a test without a line and a line without a "
        "test fail the run.\n\n"
     << "**" << passed << " passed, " << failed << " failed, " << unsupported
     << " unsupported of " << total << "** ("
     << llvm::format("%.1f", 100.0 * passed / std::max(total, 1))
     << "% passing). UNSUPPORTED means the importer rejects the model as "
        "unsupported (an op, an op domain, an element type or an attribute "
        "value).\n\n";
  if (!tolerances.empty())
    emitTolerances(os, tolerances);
  if (!gpu.empty())
    emitGpuSummary(os, expected, gpuFile, opts.gpuExpected, h2);
  os << "Tests are grouped by the op their name refers to"
     << (gpu.empty() ? ""
                     : "; `gpu passed` counts the node tests that "
                       "pass through the GPU path")
     << ".\n\n"
     << "| op | passed | failed | unsupported |"
     << (gpu.empty() ? "" : " gpu passed |") << "\n"
     << "| --- | ---: | ---: | ---: |" << (gpu.empty() ? "" : " ---: |")
     << "\n";
  for (auto &[name, g] : groups) {
    os << "| " << name << " | " << g.passed << " | " << g.failed << " | "
       << g.unsupported << " |";
    if (!gpu.empty()) {
      if (g.gpuTests)
        os << " " << g.gpuPassed << " |";
      else
        os << " |";
    }
    os << "\n";
  }
  os << "\n" << h2 << " Tests by op\n\n";
  for (auto &[name, g] : groups) {
    os << "- **" << name << "**:";
    for (const std::string &id : g.tests) {
      const std::string &status = expected[id].status;
      os << " " << StringRef(id).split('/').second
         << (status == "PASS"   ? ""
             : status == "FAIL" ? " (FAIL)"
                                : " (UNSUPPORTED)")
         << (&id == &g.tests.back() ? "" : ",");
    }
    os << "\n";
  }
  os << "\n" << h2 << " Tests that do not pass\n\n"
     << "| test | status | reason |\n| --- | --- | --- |\n";
  for (auto &[name, g] : groups)
    for (const std::string &id : g.notPassing) {
      const Expected &entry = expected[id];
      std::string reason = entry.reason;
      for (char &c : reason)
        if (c == '|')
          c = '/';
      os << "| " << id << " | " << entry.status
         << (entry.kind.empty() ? "" : " (" + entry.kind + ")") << " | "
         << reason << " |\n";
    }
  if (!opts.docSection.empty()) // the next section starts on its own
    os << "\n";
  return success();
}

} // namespace

int cgc::cgcConformanceMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "cgc-conformance: the ONNX backend tests on the reference interpreter\n");
  if (!opts.emitDoc.empty())
    return failed(emitDoc(opts)) ? 2 : 0;

  std::string error;
  std::map<std::string, Tolerance> tolerances;
  if (!opts.tolerances.empty() &&
      !readTolerances(opts.tolerances, tolerances, opts.rtol, opts.atol,
                      error)) {
    reportError(error);
    return 2;
  }
  ExpectationFile expected;
  bool checkExpected = !opts.expected.empty() && !opts.updateExpected;
  if (checkExpected && !readExpectations(opts.expected, expected, error)) {
    reportError(error);
    return 2;
  }

  std::vector<TestCase> tests;
  SmallVector<StringRef> suites;
  StringRef(opts.suites).split(suites, ',', -1, /*KeepEmpty=*/false);
  // Whether a line of the expectations or tolerances falls in this run.
  auto selected = [&](StringRef id) {
    return llvm::is_contained(suites, id.split('/').first) &&
           (opts.filter.empty() || id.contains(opts.filter));
  };
  for (StringRef suite : suites) {
    SmallString<256> dir(opts.data);
    llvm::sys::path::append(dir, suite);
    if (!llvm::sys::fs::is_directory(dir)) {
      reportError("no test suite folder '" + dir + "'");
      return 2;
    }
    for (const std::string &name : listDirs(dir, "test_")) {
      std::string id = (suite + "/" + name).str();
      if (!selected(id))
        continue;
      SmallString<256> path(dir);
      llvm::sys::path::append(path, name);
      auto tol = tolerances.find(id);
      bool overridden = tol != tolerances.end();
      tests.push_back({id, path.str().str(),
                       overridden ? tol->second.rtol : opts.rtol,
                       overridden ? tol->second.atol : opts.atol});
    }
  }
  // An override naming no test would loosen nothing and hide a typo.
  std::set<std::string> onDisk;
  for (const TestCase &test : tests)
    onDisk.insert(test.id);
  for (const auto &entry : tolerances) {
    if (!selected(entry.first) || onDisk.count(entry.first))
      continue;
    reportError(opts.tolerances + ": " + entry.first +
                " is not a test on disk");
    return 2;
  }

  // Which tests use only ops the importer knows (for the second rate).
  std::set<std::string> known;
  for (const std::string &op : supportedONNXOps())
    known.insert(op);
  std::vector<bool> allKnown;
  for (const TestCase &test : tests) {
    SmallString<256> model(test.path);
    llvm::sys::path::append(model, "model.onnx");
    std::set<std::string> ops;
    std::string ignored;
    bool ok = collectModelOps(model.str().str(), ops, ignored);
    allKnown.push_back(ok && llvm::all_of(ops, [&](const std::string &op) {
                         return known.count(op) != 0;
                       }));
  }

  std::vector<Result> results =
      runAll(tests, opts, [&](size_t i, const Result &r) {
        if (opts.quiet && r.status != "FAIL")
          return;
        llvm::outs() << r.status << " " << tests[i].id;
        if (!r.reason.empty())
          llvm::outs() << ": " << r.reason;
        llvm::outs() << "\n";
        llvm::outs().flush();
      });

  int passed = 0, failed = 0, unsupported = 0, knownTotal = 0, knownPassed = 0;
  for (auto [i, r] : llvm::enumerate(results)) {
    passed += r.status == "PASS";
    failed += r.status == "FAIL";
    unsupported += r.status == "UNSUPPORTED";
    if (allKnown[i]) {
      ++knownTotal;
      knownPassed += r.status == "PASS";
    }
  }
  // The notes on the expected results come first so that the summary is
  // the last line.
  int exitCode = 0;
  if (opts.updateExpected) {
    if (opts.expected.empty()) {
      reportError("--update-expected needs --expected FILE");
      return 2;
    }
    if (!updateExpectations(opts.expected, opts.data, tests, results, selected,
                            error)) {
      reportError(error);
      return 2;
    }
    llvm::outs() << "conformance: wrote " << opts.expected << "\n";
  } else if (checkExpected) {
    std::vector<Observed> observed;
    for (auto [test, r] : llvm::zip(tests, results))
      observed.push_back({test.id, r.status, r.kind, r.reason});
    int differences = compareExpectations(observed, expected.entries, selected,
                                          opts.expected, llvm::outs());
    if (differences) {
      llvm::outs() << "conformance: " << differences
                   << " differences from " << opts.expected
                   << "; fix them or regenerate it with --update-expected\n";
      exitCode = 1;
    }
  }
  llvm::outs() << "conformance: " << knownPassed << " of " << knownTotal
               << " tests whose ops are all supported pass ("
               << llvm::format("%.1f",
                               100.0 * knownPassed / std::max(knownTotal, 1))
               << "%)\n";
  llvm::outs() << "conformance: " << passed << " passed, " << failed
               << " failed, " << unsupported << " unsupported of "
               << results.size() << "\n";
  return exitCode;
}
