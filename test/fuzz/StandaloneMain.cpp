//===- StandaloneMain.cpp - replay fuzz inputs without libFuzzer ----------===//
//
// cgc-fuzz-replay FILE|DIR...: runs every file (folders: every file in them,
// sorted) through the fuzz target once, like a libFuzzer binary given
// files, so the seed corpus and the crash regressions run in every build.
// Prints `replayed N inputs: I imported, R rejected`.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!llvm::sys::fs::is_directory(argv[i])) {
      files.push_back(argv[i]);
      continue;
    }
    std::vector<std::string> inDir;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(argv[i], ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        inDir.push_back(it->path());
    llvm::sort(inDir);
    llvm::append_range(files, inDir);
  }
  if (files.empty()) {
    llvm::errs() << "usage: cgc-fuzz-replay FILE|DIR...\n";
    return 2;
  }
  cgc::fuzz::initialize();
  unsigned imported = 0;
  for (const std::string &file : files) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "cgc-fuzz-replay: cannot read '" << file
                   << "': " << buffer.getError().message() << "\n";
      return 2;
    }
    imported += cgc::fuzz::importOnce((*buffer)->getBuffer());
  }
  llvm::outs() << "replayed " << files.size() << " inputs: " << imported
               << " imported, " << files.size() - imported << " rejected\n";
  return 0;
}
