/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module parameters of Variable AI and Sampling Frequency
 * (kmod/law/vai.h), for a law whose parameters embed struct vai_params as
 * .vai. The law measures congestion in its own unit (bytes of queue for
 * HPCC, ns of delay for Swift), which names Token_Thresh and AI_DIV:
 *
 *	CCLAB_VAI_PARAMS("bytes of queue", "1024");
 *
 * with ai_div_default the law's default AI_DIV, as text. Include after
 * cclab_cc.h (CCLAB_PARAM).
 */
#ifndef CCLAB_VAI_PARAMS_H
#define CCLAB_VAI_PARAMS_H

#define CCLAB_VAI_PARAMS(unit, ai_div_default)					\
	CCLAB_PARAM(vai_enable, vai.enable,					\
		    "Variable AI: 0 off, 1 on (0)");				\
	CCLAB_PARAM(vai_sf_acks, vai.sf_acks,					\
		    "Sampling Frequency: decrease point every N ACKs, 0 off [0, 100000] (0)"); \
	CCLAB_PARAM(vai_token_thresh, vai.token_thresh,				\
		    "VAI Token_Thresh in " unit ", 0 = the law's automatic value (0)"); \
	CCLAB_PARAM(vai_ai_div, vai.ai_div,					\
		    "VAI AI_DIV: congestion per token in " unit " [1, 1e9] (" ai_div_default ")"); \
	CCLAB_PARAM(vai_bank_cap, vai.bank_cap,					\
		    "VAI Bank_Cap in tokens [1, 1000000] (1000)");		\
	CCLAB_PARAM(vai_ai_cap, vai.ai_cap,					\
		    "VAI AI_Cap: tokens spent per adjustment at most [1, bank_cap] (100)"); \
	CCLAB_PARAM(vai_dampener_const, vai.dampener_const,			\
		    "VAI Dampener_Constant (8)")

#endif /* CCLAB_VAI_PARAMS_H */
