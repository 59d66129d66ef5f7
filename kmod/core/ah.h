// Ah: an address handle, the path to a UD peer. User WQEs name an AH by
// handle; the handle table checks that it belongs to the poster's PD.
#pragma once
#include "pd.h"

struct sroce_env_path;

namespace sroce {

class Ah : public ktl::RefCounted<Ah> {
public:
	static ktl::Result<ktl::RefPtr<Ah>> create(Pd &pd, sroce_env_path *path, const sroce_core_path_info &info);
	void kill(); // out of the handle table
	u32 handle() const { return handle_; }
	u32 pdn() const { return pd_->pdn(); }
	sroce_env_path *path() const { return path_; }
	const sroce_core_path_info &info() const { return info_; }

private:
	friend class ktl::RefCounted<Ah>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Ah(Pd &pd, sroce_env_path *path, const sroce_core_path_info &info) : pd_(&pd), path_(path), info_(info) {}
	~Ah();

	ktl::RefPtr<Pd> pd_;
	sroce_env_path *path_;
	sroce_core_path_info info_;
	u32 handle_ = 0;
};

} // namespace sroce
