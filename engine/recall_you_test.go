package engine

import "testing"

func TestAsksAssistant(t *testing.T) {
	for text, want := range map[string]bool{
		"你建议我怎么调整作息？":                           true,
		"你说我膝盖外侧疼可能是什么原因？":                      true,
		"你之前推荐的那本书叫什么？":                         true,
		"想提高游泳速度你让我怎么练？":                        true,
		"What did you recommend?":               true,
		"what did you once say about the knee?": true,
		"你记得我爸的血压吗？":                            false,
		"我说过想买什么车？":                             false,
		"Do you know my sister's exam date?":    false,
		"what did I tell you about the car?":    false,
	} {
		if got := asksAssistant(text); got != want {
			t.Errorf("asksAssistant(%q) = %v, want %v", text, got, want)
		}
	}
}
