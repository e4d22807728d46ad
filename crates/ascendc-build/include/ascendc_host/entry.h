// AscendC host layer: kernel entries (the binary ABI of ascendc_host/binary.h). Every kernel the
// compiled code instantiates — a plain kernel, or an instantiation of a template kernel that a
// `<<<...>>>` launch names or the build lists — gets an entry: a function the runtime calls once
// per block, which unpacks the launch's argument buffer into the kernel's parameters (their
// sizes and kinds read off the C++ signature) and runs the block's cores (one vector core, one
// cube core, or the cube and vector cores of a mixed kernel side by side). Entries register
// themselves when their object is loaded, under the name the C++ compiler prints for the
// kernel (`add_custom`, `ns::k`, `add_custom<2048>`), in the table the binary exports.
#ifndef ASCENDC_HOST_ENTRY_H
#define ASCENDC_HOST_ENTRY_H

#include "core.h"
#include "fiber.h"
#include "memory.h"
#include "sync.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" {
// The table of a kernel binary; defined (and exported) only by the binary's table object, so
// that objects linked into a program register nothing.
extern ascendc_host_binary ascendc_host_binary_v1 __attribute__((weak, visibility("default")));
}

namespace ascendc_host {

// The kernel `K` names, from the compiler's description of a function parametrised by it
// (`... [with auto K = add_custom<2048>]`, or `[K = &add_custom<2048>]`).
inline std::string kernel_name_from(const char* pretty)
{
    std::string s(pretty);
    size_t at = s.rfind("K = ");
    if (at == std::string::npos) {
        return s;
    }
    std::string name = s.substr(at + 4);
    // Up to the end of the description (or of this template argument).
    int depth = 0;
    size_t end = 0;
    for (; end < name.size(); ++end) {
        char c = name[end];
        if (c == '<' || c == '(' || c == '[') {
            ++depth;
        } else if (c == '>' || c == ')' || (c == ']' && depth > 0)) {
            --depth;
        } else if ((c == ']' || c == ';') && depth == 0) {
            break;
        }
    }
    name = name.substr(0, end);
    while (!name.empty() && (name[0] == '&' || name[0] == ' ')) {
        name.erase(0, 1);
    }
    while (!name.empty() && name.back() == ' ') {
        name.pop_back();
    }
    return name;
}

template <auto K>
inline const char* kernel_name_of() noexcept
{
    static const std::string name = kernel_name_from(__PRETTY_FUNCTION__);
    return name.c_str();
}

// The name a kernel's entry has in the binary.
template <auto K>
inline const char* kernel_name()
{
    return kernel_name_of<K>();
}

// How a parameter travels (ascendc_host/binary.h): its size, and whether it is global memory
// the kernel reads or writes.
template <typename T, typename = void>
struct param_abi {
    using D = std::decay_t<T>;
    static constexpr uint32_t size = static_cast<uint32_t>(sizeof(D));
    static constexpr uint32_t kind =
        std::is_pointer_v<D>
            ? (std::is_const_v<std::remove_pointer_t<D>> ? ASCENDC_HOST_PARAM_GM_READ
                                                         : ASCENDC_HOST_PARAM_GM_WRITE)
            : ASCENDC_HOST_PARAM_VALUE;
    // The parameter's value from the launch's argument bytes.
    static D get(const uint8_t* p)
    {
        D v;
        std::memcpy(static_cast<void*>(&v), p, sizeof(D));
        return v;
    }
};

// The value of a kernel argument from its bytes.
template <typename T>
inline std::decay_t<T> arg(const void* p)
{
    return param_abi<T>::get(static_cast<const uint8_t*>(p));
}

template <typename F>
struct kernel_sig;

template <typename... P>
struct kernel_sig<void (*)(P...)> {
    static constexpr uint32_t count = static_cast<uint32_t>(sizeof...(P));
    static const ascendc_host_param* params()
    {
        static const ascendc_host_param p[sizeof...(P) + 1] = {
            {param_abi<P>::size, param_abi<P>::kind}..., {0, ASCENDC_HOST_PARAM_VALUE}};
        return p;
    }
    template <auto K, size_t... I>
    static void call(const uint8_t* const* a, std::index_sequence<I...>)
    {
        (void)a;
        K(param_abi<P>::get(a[I])...);
    }
    template <auto K>
    static void invoke(const uint8_t* const* a)
    {
        call<K>(a, std::index_sequence_for<P...>{});
    }
};

template <typename... P>
struct kernel_sig<void (*)(P...) noexcept> : kernel_sig<void (*)(P...)> {};

// What the build recorded of a kernel (by its name without template arguments): the cores per
// block, whether its blocks wait for each other, and which parameter is its system workspace.
struct Family {
    uint32_t cube = 0;
    uint32_t vector = 1;
    bool coop = false;
    int workspace = -1;
};

struct Registry {
    std::mutex m;
    std::deque<std::string> names;  // stable storage for the table's names
    std::vector<ascendc_host_kernel> kernels;
    std::map<std::string, Family> families;
};

inline Registry& registry()
{
    static Registry* r = new Registry();  // never destroyed: entries may run at exit
    return *r;
}

// Records the kind of the kernels named `name` (every instantiation of a template kernel).
inline bool register_family(const char* name, uint32_t cube, uint32_t vector, bool coop,
                            int workspace)
{
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.m);
    r.families[name] = Family{cube, vector, coop, workspace};
    return true;
}

inline Family family_of(const char* kernel)
{
    std::string base(kernel);
    size_t lt = base.find('<');
    if (lt != std::string::npos) {
        base.resize(lt);
    }
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.m);
    auto it = r.families.find(base);
    return it == r.families.end() ? Family{} : it->second;
}

// Adds an entry to the binary's table (nothing in a program's own objects).
inline bool register_kernel(const char* name, ascendc_host_entry entry, uint32_t count,
                            const ascendc_host_param* params)
{
    if (&ascendc_host_binary_v1 == nullptr) {
        return false;
    }
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.m);
    for (const ascendc_host_kernel& k : r.kernels) {
        if (std::strcmp(k.name, name) == 0) {
            return true;
        }
    }
    r.names.emplace_back(name);
    r.kernels.push_back(ascendc_host_kernel{r.names.back().c_str(), entry, count, 0, params});
    ascendc_host_binary_v1.kernels = r.kernels.data();
    ascendc_host_binary_v1.kernel_count = static_cast<uint32_t>(r.kernels.size());
    return true;
}

int run_entry(ascendc_host_block* b, const char* kernel, const ascendc_host_param* params,
              uint32_t count, void (*call)(const uint8_t* const* args)) noexcept;

// The entry of kernel `K`.
template <auto K>
inline int entry(ascendc_host_block* b) noexcept
{
    using Sig = kernel_sig<decltype(K)>;
    return run_entry(b, kernel_name<K>(), Sig::params(), Sig::count, &Sig::template invoke<K>);
}

// Instantiated for every kernel the code launches or the build lists: registers its entry when
// the object is loaded.
template <auto K>
struct registrar {
    static inline const bool done = register_kernel(kernel_name<K>(), &entry<K>,
                                                    kernel_sig<decltype(K)>::count,
                                                    kernel_sig<decltype(K)>::params());
};

// An entry also reachable as `alias` (the name a build listed an instantiation under).
template <auto K>
inline bool register_alias(const char* alias)
{
    (void)registrar<K>::done;
    return register_kernel(alias, &entry<K>, kernel_sig<decltype(K)>::count,
                           kernel_sig<decltype(K)>::params());
}

// ---- running a block's cores ----

// The offset of the parameter after one that ends at `end`: the next multiple of 8.
constexpr uint64_t next_slot(uint64_t end) { return (end + 7u) & ~uint64_t{7}; }

// The most parameters a kernel may have (the runtime's limit of aclrtKernelArgsAppend).
constexpr uint32_t MAX_PARAMS = 128;

// How one core of a block ended.
struct CoreResult {
    std::string out;
    KernelFault fault;
    int rc = 0;
    uint32_t core = ASCENDC_HOST_CORE_VECTOR;
};

// Runs `body` as the core `proto` describes, in a context of its own; its output and failure go
// to `r`.
template <typename Body>
inline void run_core(const BlockContext& proto, CoreResult& r, Body&& body) noexcept
{
    BlockContext ctx = proto;
    BlockContext* saved = enter(&ctx);
    try {
        body();
    } catch (KernelFault& e) {
        r.fault = std::move(e);
        r.rc = 1;
    } catch (const std::exception& e) {
        r.fault.kind = ASCENDC_HOST_FAULT_KERNEL;
        r.fault.message = std::string("C++ exception: ") + e.what();
        r.rc = 1;
    } catch (...) {
        r.fault.kind = ASCENDC_HOST_FAULT_KERNEL;
        r.fault.message = "unknown C++ exception";
        r.rc = 1;
    }
    release_core_state(ctx);
    enter(saved);
    r.core = ctx.core;
    try {
        r.out += ctx.out;
    } catch (...) {
    }
}

// The cores of block `block` of a launch of `fam`'s kernel: AIC cores first, then AIV cores.
inline std::vector<BlockContext> block_cores(const Family& fam, uint32_t block, uint32_t blocks,
                                             const BlockContext& base)
{
    std::vector<BlockContext> cores;
    const bool mixed = fam.cube > 0;
    for (uint32_t j = 0; j < fam.cube; ++j) {
        BlockContext c = base;
        c.type = CoreType::AIC;
        c.idx = block * fam.cube + j;
        c.block = block;
        c.num = blocks;
        c.sub_idx = j;
        c.sub_num = fam.cube;
        c.ratio = fam.cube;
        c.core = ASCENDC_HOST_CORE_CUBE;
        cores.push_back(c);
    }
    for (uint32_t j = 0; j < fam.vector; ++j) {
        BlockContext c = base;
        c.type = CoreType::AIV;
        c.idx = block * fam.vector + j;
        c.block = block;
        c.num = blocks;
        c.sub_idx = j;
        c.sub_num = fam.vector;
        c.ratio = fam.vector;
        c.core = mixed ? ASCENDC_HOST_CORE_CUBE : ASCENDC_HOST_CORE_VECTOR;
        cores.push_back(c);
    }
    return cores;
}

inline std::string core_label(const BlockContext& c)
{
    if (c.type == CoreType::AIC) {
        return c.sub_num > 1 ? "AIC " + std::to_string(c.sub_idx) : "AIC";
    }
    return "AIV " + std::to_string(c.sub_idx);
}

// Runs the cores of one block (several of them side by side as fibers) and merges their
// results: the output in core order, the first failure (named by its core when the block has
// several).
template <typename Run>
inline CoreResult run_block_cores(std::vector<BlockContext>& cores, Run&& run) noexcept
{
    CoreResult merged;
    if (cores.size() == 1) {
        run(cores[0], merged);
        return merged;
    }
    std::vector<CoreResult> results(cores.size());
    try {
        Fibers fibers;
        for (size_t i = 0; i < cores.size(); ++i) {
            fibers.add([&, i] { run(cores[i], results[i]); });
        }
        fibers.run();
    } catch (...) {
        merged.rc = 1;
        merged.fault.message = "cannot start the block's cores";
        return merged;
    }
    for (size_t i = 0; i < cores.size(); ++i) {
        merged.out += results[i].out;
        if (results[i].rc != 0 && merged.rc == 0) {
            merged.rc = 1;
            merged.fault = results[i].fault;
            merged.fault.message = core_label(cores[i]) + ": " + merged.fault.message;
        }
        merged.core = results[0].core;
    }
    return merged;
}

inline void set_fault(ascendc_host_block* b, const KernelFault& f, uint32_t core) noexcept
{
    b->fault_kind = f.kind;
    b->core = core;
    b->fault_addr = f.addr;
    b->fault_bytes = f.bytes;
    if (b->fault != nullptr && b->fault_capacity > 0) {
        std::snprintf(b->fault, b->fault_capacity, "%s", f.message.c_str());
    }
}

// The blocks of a launch whose blocks wait for each other: the first entry called runs all of
// them (as fibers on its thread); the entries of the other blocks wait for it and hand over
// their block's result.
struct CoopGroup {
    std::mutex m;
    std::condition_variable done_cv;
    bool started = false;
    bool finished = false;
    uint32_t collected = 0;
    std::vector<CoreResult> results;
};

inline std::mutex& coop_mutex()
{
    static std::mutex* m = new std::mutex();
    return *m;
}

inline std::map<std::pair<const void*, const void*>, std::shared_ptr<CoopGroup>>& coop_groups()
{
    static auto* g = new std::map<std::pair<const void*, const void*>, std::shared_ptr<CoopGroup>>();
    return *g;
}

inline int run_entry(ascendc_host_block* b, const char* kernel, const ascendc_host_param* params,
                     uint32_t count, void (*call)(const uint8_t* const* args)) noexcept
{
    if (b == nullptr || b->abi != ASCENDC_HOST_ABI) {
        return 1;
    }
    KernelFault f;
    const uint8_t* ptrs[MAX_PARAMS];
    ascendc_host_region regions[MAX_PARAMS];
    uint32_t region_count = 0;
    uint64_t offset = 0;
    const Family fam = family_of(kernel);
    uint8_t* workspace = nullptr;
    for (uint32_t i = 0; i < count && i < MAX_PARAMS; ++i) {
        offset = next_slot(offset);
        if (offset + params[i].size > b->args_size) {
            f.message = "the launch passes " + std::to_string(b->args_size) +
                        " byte(s) of arguments, but parameter " + std::to_string(i) +
                        " ends at byte " + std::to_string(offset + params[i].size) +
                        " (the kernel takes " + std::to_string(count) + " parameter(s))";
            set_fault(b, f, fam.cube > 0 ? ASCENDC_HOST_CORE_CUBE : ASCENDC_HOST_CORE_VECTOR);
            return 1;
        }
        ptrs[i] = b->args + offset;
        if (params[i].kind != ASCENDC_HOST_PARAM_VALUE && params[i].size == sizeof(void*)) {
            void* p = nullptr;
            std::memcpy(&p, ptrs[i], sizeof(p));
            if (static_cast<int>(i) == fam.workspace) {
                workspace = static_cast<uint8_t*>(p);
            }
            const void* base = nullptr;
            uint64_t len = 0;
            uint32_t writable = 0;
            if (p != nullptr && b->find_memory(b->runtime, p, &base, &len, &writable) == 0) {
                uint64_t skip = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p) -
                                                      reinterpret_cast<uintptr_t>(base));
                regions[region_count++] = ascendc_host_region{
                    p, len - skip,
                    (writable != 0 && params[i].kind == ASCENDC_HOST_PARAM_GM_WRITE) ? 1u : 0u};
            }
        }
        offset += params[i].size;
    }
    BlockContext base;
    base.regions = regions;
    base.region_count = region_count;
    base.rt = b;
    base.sys_workspace = workspace;
    auto run = [&](BlockContext& proto, CoreResult& r) {
        run_core(proto, r, [&] { call(ptrs); });
    };
    CoreResult result;
    if (!fam.coop) {
        Launch launch(b->block_num, fam.cube, fam.vector);
        base.launch = &launch;
        std::vector<BlockContext> cores = block_cores(fam, b->block_idx, b->block_num, base);
        result = run_block_cores(cores, run);
    } else {
        // Every block of the launch at once, on the thread of the first entry called.
        std::shared_ptr<CoopGroup> group;
        const std::pair<const void*, const void*> key{b->args, kernel};
        {
            std::lock_guard<std::mutex> lk(coop_mutex());
            auto& g = coop_groups()[key];
            if (!g) {
                g = std::make_shared<CoopGroup>();
            }
            group = g;
        }
        bool runner = false;
        {
            std::lock_guard<std::mutex> lk(group->m);
            if (!group->started) {
                group->started = true;
                runner = true;
            }
        }
        if (runner) {
            std::vector<CoreResult> results(b->block_num);
            Launch launch(b->block_num, fam.cube, fam.vector);
            base.launch = &launch;
            std::vector<std::vector<BlockContext>> cores;
            for (uint32_t blk = 0; blk < b->block_num; ++blk) {
                cores.push_back(block_cores(fam, blk, b->block_num, base));
            }
            std::vector<std::vector<CoreResult>> per_core(b->block_num);
            try {
                Fibers fibers;
                for (uint32_t blk = 0; blk < b->block_num; ++blk) {
                    per_core[blk].resize(cores[blk].size());
                    for (size_t i = 0; i < cores[blk].size(); ++i) {
                        fibers.add([&, blk, i] { run(cores[blk][i], per_core[blk][i]); });
                    }
                }
                fibers.run();
            } catch (...) {
            }
            for (uint32_t blk = 0; blk < b->block_num; ++blk) {
                CoreResult& m = results[blk];
                for (size_t i = 0; i < per_core[blk].size(); ++i) {
                    const CoreResult& r = per_core[blk][i];
                    m.out += r.out;
                    if (r.rc != 0 && m.rc == 0) {
                        m.rc = 1;
                        m.fault = r.fault;
                        if (cores[blk].size() > 1) {
                            m.fault.message = core_label(cores[blk][i]) + ": " + m.fault.message;
                        }
                    }
                    if (i == 0) {
                        m.core = r.core;
                    }
                }
            }
            std::lock_guard<std::mutex> lk(group->m);
            group->results = std::move(results);
            group->finished = true;
            group->done_cv.notify_all();
        }
        {
            std::unique_lock<std::mutex> lk(group->m);
            group->done_cv.wait(lk, [&] { return group->finished; });
            if (b->block_idx < group->results.size()) {
                result = std::move(group->results[b->block_idx]);
            }
            if (++group->collected == b->block_num) {
                std::lock_guard<std::mutex> glk(coop_mutex());
                coop_groups().erase(key);
            }
        }
    }
    if (!result.out.empty()) {
        b->print(b->runtime, result.out.data(), result.out.size());
    }
    if (result.rc != 0) {
        set_fault(b, result.fault, result.core);
    }
    return result.rc;
}

}  // namespace ascendc_host

// Records the kind of the kernels named `name` (generated by ascendc-build from the source).
#define ASCENDC_HOST_CAT2(a, b) a##b
#define ASCENDC_HOST_CAT(a, b) ASCENDC_HOST_CAT2(a, b)
#define ASCENDC_HOST_FAMILY(name, cube, vector, coop, workspace)                                  \
    static const bool ASCENDC_HOST_CAT(ascendc_host_family_, __COUNTER__)                         \
        __attribute__((unused)) = ::ascendc_host::register_family(name, cube, vector, coop,       \
                                                                  workspace)
// Gives kernel `k` (a plain kernel, or an instantiation `k<args>`) an entry.
#define ASCENDC_HOST_KERNEL(...) template struct ::ascendc_host::registrar<&__VA_ARGS__>
// The same, also under the name `alias`.
#define ASCENDC_HOST_KERNEL_AS(alias, ...)                                                        \
    static const bool ASCENDC_HOST_CAT(ascendc_host_alias_, __COUNTER__) __attribute__((unused)) = \
        ::ascendc_host::register_alias<&__VA_ARGS__>(alias)

#endif
