export default {"all":[
["預算","预算","yu4 suan4","budget",[],[]],
["資金","资金","zi1 jin1",["funds","capital"],[],[]],
["上線","上线","shang4 xian4",["to go online","(of a product) to launch"],[],[]],
["提到","提到","ti2 dao4","to mention; to bring up",[],[]],
["提","提","ti2",["to carry","to raise"],[],[]],
["到了","到了","dao4 le5","at last; in the end",[],[]],
["到","到","dao4",["to arrive","to reach"],[],[]],
["了","了","le5","(completed action marker)",[],[]],
["誰","谁","shei2","who",[],[]],
["問題","问题","wen4 ti2",["question","problem"],[],[]],
["問","问","wen4","to ask",[],[]],
["題","题","ti2","topic",[],[]],
["王","王","Wang2","surname Wang",[],[]],
["王","王","wang2",["king","monarch"],[],[]],
["時","时","shi2","CL:個|个[ge4]; time",[],[]],
["說","说","shuo1","to speak; to say",[],[]]
]}
