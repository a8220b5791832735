//===- InterpreterTest.cpp - host tensors and the interpreter API ---------===//

#include "cgc/Interpreter/Interpreter.h"
#include "cgc/Dialect/Cgc/IR/CgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace mlir;
using namespace cgc::interp;

namespace {

struct InterpreterTest : ::testing::Test {
  MLIRContext context;
  Builder b{&context};
  InterpreterTest() {
    context.loadDialect<cgc::CgcDialect, func::FuncDialect>();
  }
  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }
  HostTensor vector(Type type, std::initializer_list<double> values) {
    HostTensor t(type, {(int64_t)values.size()});
    int64_t i = 0;
    for (double v : values)
      t.setF(i++, v);
    return t;
  }
};

TEST(HalfFloat, RoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds up to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  // 1 + 2^-11 is halfway between 1 and the next half: ties to even (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x4040), 3.0f);
}

TEST_F(InterpreterTest, StoresWrapAndTruncate) {
  HostTensor i8(b.getIntegerType(8), {2});
  i8.setI(0, 200); // wraps
  EXPECT_EQ(i8.getI(0), -56);
  i8.setF(1, -2.9); // truncates toward zero
  EXPECT_EQ(i8.getI(1), -2);
  HostTensor u8(b.getIntegerType(8, /*isSigned=*/false), {1});
  u8.setI(0, -1);
  EXPECT_EQ(u8.getU(0), 255u);
  HostTensor flag(b.getI1Type(), {1});
  flag.setF(0, 0.5);
  EXPECT_EQ(flag.bytes[0], 1); // one byte per i1, != 0 is true
  HostTensor f(b.getF32Type(), {1});
  f.setF(0, NAN);
  EXPECT_EQ(f.getI(0), 0); // NaN to integer gives 0, no UB
}

TEST_F(InterpreterTest, RunsAFunction) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %s = cgc.add %a, %b : tensor<3xf32>, tensor<3xf32>
      %r = cgc.round %s : tensor<3xf32>
      return %r : tensor<3xf32>
    })mlir");
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("main");
  FailureOr<std::vector<HostTensor>> out =
      interpret(func, {vector(b.getF32Type(), {0.25, 1.5, -2.0}),
                       vector(b.getF32Type(), {2.25, 1.0, -0.5})});
  ASSERT_TRUE(succeeded(out));
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].getF(0), 2.0);  // 2.5 to even
  EXPECT_EQ((*out)[0].getF(1), 2.0);  // 2.5 to even
  EXPECT_EQ((*out)[0].getF(2), -2.0); // -2.5 to even
}

TEST_F(InterpreterTest, RunTimeErrorsAreDiagnostics) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
      %q = cgc.div %a, %b : tensor<2xi32>, tensor<2xi32> loc("the_div")
      return %q : tensor<2xi32>
    })mlir");
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto func = module->lookupSymbol<func::FuncOp>("main");
  Type i32 = b.getIntegerType(32);
  EXPECT_TRUE(
      failed(interpret(func, {vector(i32, {4, 5}), vector(i32, {2, 0})})));
  EXPECT_NE(message.find("integer division by zero"), std::string::npos);
  // Inputs that do not match the signature are refused.
  EXPECT_TRUE(failed(interpret(func, {vector(i32, {4, 5})})));
  EXPECT_TRUE(failed(interpret(func, {vector(i32, {4}), vector(i32, {2, 1})})));
}

TEST_F(InterpreterTest, ArenaModeNeedsAPlan) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %n = cgc.neg %a : tensor<2xf32>
      return %n : tensor<2xf32>
    })mlir");
  ASSERT_TRUE(module);
  ScopedDiagnosticHandler handler(&context,
                                  [](Diagnostic &) { return success(); });
  auto func = module->lookupSymbol<func::FuncOp>("main");
  InterpreterOptions options;
  options.useArena = true;
  EXPECT_TRUE(
      failed(interpret(func, {vector(b.getF32Type(), {1, 2})}, options)));
  EXPECT_TRUE(succeeded(interpret(func, {vector(b.getF32Type(), {1, 2})})));
}

} // namespace

namespace {

/// Rank r's tensor [r + 1, 10 (r + 1)] for a group of `ranks`.
HostTensor rankTensor(MLIRContext &context, int64_t r) {
  HostTensor t(Float32Type::get(&context), {2});
  t.setF(0, r + 1);
  t.setF(1, 10 * (r + 1));
  return t;
}

TEST(RankGroupTest, EveryRankGetsTheSumEveryRound) {
  MLIRContext context;
  constexpr int64_t ranks = 3, rounds = 50;
  RankGroup group(ranks);
  std::vector<std::vector<double>> seen(ranks);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      for (int64_t i = 0; i < rounds; ++i) {
        std::string error;
        HostTensor mine = rankTensor(context, r);
        mine.setF(0, mine.getF(0) + i);
        FailureOr<HostTensor> sum = group.allReduceSum(r, mine, error);
        seen[r].push_back(succeeded(sum) ? sum->getF(0) + sum->getF(1) : -1);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < rounds; ++i)
      // (1 + 2 + 3 + 3 i) + (10 + 20 + 30)
      EXPECT_EQ(seen[r][i], 66 + 3 * i) << "rank " << r << " round " << i;
}

TEST(RankGroupTest, AFailedRankReleasesTheOthers) {
  MLIRContext context;
  RankGroup group(3);
  std::vector<std::string> errors(2);
  std::vector<std::thread> waiting;
  for (int64_t r = 0; r < 2; ++r)
    waiting.emplace_back([&, r] {
      HostTensor mine = rankTensor(context, r);
      EXPECT_TRUE(failed(group.allReduceSum(r, mine, errors[r])));
    });
  // Rank 2 fails before its all-reduce: the waiting ranks stop instead of
  // hanging, and so does any later all-reduce.
  group.abort();
  for (std::thread &t : waiting)
    t.join();
  EXPECT_EQ(errors[0], "another rank failed");
  EXPECT_EQ(errors[1], "another rank failed");
  std::string later;
  HostTensor mine = rankTensor(context, 2);
  EXPECT_TRUE(failed(group.allReduceSum(2, mine, later)));
}

TEST(RankGroupTest, RanksOfDifferentTypesFail) {
  MLIRContext context;
  RankGroup group(2);
  std::string error0, error1;
  std::thread other([&] {
    HostTensor wide(Float32Type::get(&context), {3});
    EXPECT_TRUE(failed(group.allReduceSum(1, wide, error1)));
  });
  HostTensor mine = rankTensor(context, 0);
  EXPECT_TRUE(failed(group.allReduceSum(0, mine, error0)));
  other.join();
  EXPECT_EQ(error0, "the ranks all-reduce tensors of different types "
                    "(tensor<2xf32> and tensor<3xf32>)");
  EXPECT_EQ(error0, error1);
}

// An all-gather stacks the ranks' tensors in rank order, the same on every
// rank, and may follow an all-reduce in the same group.
TEST(RankGroupTest, AllGatherStacksInRankOrder) {
  MLIRContext context;
  constexpr int64_t ranks = 3;
  RankGroup group(ranks);
  std::vector<std::vector<double>> seen(ranks);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::string error;
      HostTensor mine = rankTensor(context, r);
      FailureOr<HostTensor> sum = group.allReduceSum(r, mine, error);
      FailureOr<HostTensor> all = group.allGather(r, mine, error);
      if (failed(sum) || failed(all) || all->shape != SmallVector<int64_t>{3, 2})
        return;
      seen[r].push_back(sum->getF(0));
      for (int64_t i = 0; i < all->numElements(); ++i)
        seen[r].push_back(all->getF(i));
    });
  for (std::thread &t : threads)
    t.join();
  std::vector<double> expected{6, 1, 10, 2, 20, 3, 30};
  for (int64_t r = 0; r < ranks; ++r)
    EXPECT_EQ(seen[r], expected) << "rank " << r;
}

} // namespace
